//! Panics are never silent: the hook prints a report naming the file and rule being analysed
//! and the version, and the run exits 2 even when the panic was caught and the other files
//! were still checked (its answer is incomplete). `RETRYLINT_TEST_PANIC=<rule>` makes that
//! rule panic (`main` panics outside any file), so tests can see the report.

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

static PANICKED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The file this thread is working on, and the rule (or `extract`).
    static FILE: RefCell<Option<String>> = const { RefCell::new(None) };
    static RULE: Cell<&'static str> = const { Cell::new("-") };
}

/// Runs `work` with `file` and `rule` named in any panic report it causes; [`set_rule`] names
/// each rule run inside it.
pub fn within<R>(file: &Path, rule: &'static str, work: impl FnOnce() -> R) -> R {
    let previous = FILE.with(|c| c.replace(Some(crate::source::printable::path(file))));
    let previous_rule = RULE.with(|r| r.replace(rule));
    let result = work();
    FILE.with(|c| *c.borrow_mut() = previous);
    RULE.with(|r| r.set(previous_rule));
    result
}

/// Names the rule now running (inside [`within`]).
pub fn set_rule(rule: &'static str) {
    RULE.with(|r| r.set(rule));
}

/// Whether a panic happened in this process (caught or not).
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Panics when `RETRYLINT_TEST_PANIC` names `what` (a rule, or `main`): the test hook.
pub fn test_hook(what: &str) {
    static HOOK: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
    let hook = HOOK.get_or_init(|| std::env::var_os("RETRYLINT_TEST_PANIC"));
    if hook.as_ref().is_some_and(|v| v == what) {
        panic!("RETRYLINT_TEST_PANIC={what}");
    }
}

/// The report of one panic.
pub fn report(message: &str, location: Option<String>) -> String {
    let file = FILE.with(|c| c.borrow().clone()).unwrap_or_else(|| "-".into());
    let rule = RULE.with(Cell::get);
    // A panic message can quote what was being read: escaped like every other project text.
    let message = crate::source::printable::line(message);
    format!(
        "error: retrylint {} crashed (internal error: {message}{})\n  file: {file}\n  rule: {rule}\n  please report it at https://github.com/retrylint/retrylint/issues with this message; the run exits 2 because its answer is incomplete",
        env!("CARGO_PKG_VERSION"),
        location.map(|l| format!(", at {l}")).unwrap_or_default(),
    )
}

/// Installs the hook that records every panic and prints its report on stderr (with the
/// default hook's output too under `RETRYLINT_DEBUG`).
pub fn install_hook() {
    let debug = std::env::var_os("RETRYLINT_DEBUG").is_some();
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICKED.store(true, Ordering::SeqCst);
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let location = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{}", report(&message, location));
        if debug {
            default(info);
        }
    }));
}
