//! A count of the steps extraction takes, kept in debug builds only: every node looked at
//! (its kind read), every step up or down the tree a parent look-up takes (each child of each
//! level it reads through), every name looked up. Tests read it to check that extraction
//! grows with the input's size and not faster ([`counted`]); release builds count nothing.

#[cfg(debug_assertions)]
thread_local! {
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `n` steps.
#[inline(always)]
pub(crate) fn step(n: u64) {
    #[cfg(debug_assertions)]
    STEPS.with(|steps| steps.set(steps.get().saturating_add(n)));
    #[cfg(not(debug_assertions))]
    let _ = n;
}

/// What `run` returns, and the steps it took on this thread (0 in a release build).
pub fn counted<T>(run: impl FnOnce() -> T) -> (T, u64) {
    #[cfg(debug_assertions)]
    {
        let before = STEPS.with(|steps| steps.get());
        let result = run();
        (result, STEPS.with(|steps| steps.get()) - before)
    }
    #[cfg(not(debug_assertions))]
    (run(), 0)
}
