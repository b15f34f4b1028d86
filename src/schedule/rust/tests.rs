use super::*;
use crate::schedule::{summarize, Attempts, Gap, Jitter};

fn path(text: &str) -> Vec<String> {
    text.split("::").map(String::from).collect()
}

fn op(method: &str, args: Vec<Arg>) -> (String, Vec<Arg>) {
    (method.into(), args)
}

fn built(ctor: &str, args: &[Arg], ops: Vec<(String, Vec<Arg>)>) -> Backoff {
    let (_, mut state) = constructor(&path(ctor), args).expect("known constructor");
    for op in &ops {
        assert_eq!(apply(&mut state, &op.0, &op.1), Applied::Ok, "{op:?}");
    }
    state
}

#[test]
fn backon_exponential_defaults() {
    let s = summarize(&sched(&built("backon::ExponentialBuilder::default", &[], vec![])));
    assert_eq!(s.attempts, Attempts::Exact(3));
    assert_eq!(s.delays.as_deref(), Some(&[1000.0, 2000.0, 4000.0][..]));
    assert_eq!(s.gap, Gap::Capped(60_000.0));
    assert_eq!(s.jitter, Jitter::No);
}

#[test]
fn backon_total_delay_stops_before_the_total() {
    let state = built(
        "backon::ExponentialBuilder::default",
        &[],
        vec![
            op("with_factor", vec![Arg::Num(1.0)]),
            op("with_total_delay", vec![Arg::Some(Box::new(Arg::Ms(3000.0)))]),
            op("with_max_times", vec![Arg::Num(5.0)]),
        ],
    );
    // backon's own test: three 1 s delays, then None.
    let s = summarize(&sched(&state));
    assert_eq!(s.delays.as_deref(), Some(&[1000.0, 1000.0, 1000.0][..]));
}

#[test]
fn backon_fibonacci_overshoots_its_max_delay() {
    let s = summarize(&sched(&built(
        "backon::FibonacciBuilder::default",
        &[],
        vec![op("without_max_times", vec![])],
    )));
    assert_eq!(s.gap, Gap::Capped(89_000.0));
    assert_eq!(s.attempts, Attempts::Unbounded);
    let first: Vec<f64> = s.delays.unwrap().into_iter().take(12).collect();
    assert_eq!(
        first,
        [1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0, 89.0].map(|x| x * 1000.0)
    );
}

#[test]
fn tokio_retry_exponential_is_a_power_of_its_base() {
    let s = summarize(&sched(&built(
        "tokio_retry::ExponentialBackoff::from_millis",
        &[Arg::Num(10.0)],
        vec![op("take", vec![Arg::Num(3.0)])],
    )));
    assert_eq!(s.delays.as_deref(), Some(&[10.0, 100.0, 1000.0][..]));
    let s = summarize(&sched(&built(
        "tokio_retry::ExponentialBackoff::from_millis",
        &[Arg::Num(2.0)],
        vec![
            op("factor", vec![Arg::Num(1000.0)]),
            op("max_delay", vec![Arg::Ms(4000.0)]),
            op("take", vec![Arg::Num(4.0)]),
        ],
    )));
    assert_eq!(s.delays.as_deref(), Some(&[2000.0, 4000.0, 4000.0, 4000.0][..]));
}

#[test]
fn tokio_retry2_has_the_same_strategies_and_its_own_jitter() {
    let ops = || {
        vec![
            op("max_delay_millis", vec![Arg::Num(25.0)]),
            op("map", vec![Arg::Path(path("tokio_retry2::strategy::jitter"))]),
            op("take", vec![Arg::Num(5.0)]),
        ]
    };
    let state = built(
        "tokio_retry2::strategy::FibonacciBackoff::from_millis",
        &[Arg::Num(10.0)],
        ops(),
    );
    assert_eq!(state.lib(), Library::TokioRetry2);
    let s = summary(&state);
    assert_eq!(s.attempts, Attempts::Exact(5));
    assert_eq!(s.delays.as_deref(), Some(&[10.0, 10.0, 20.0, 25.0, 25.0][..]));
    assert_eq!(s.jitter, Jitter::Yes);
    // `jitter` draws from 0.5–1.5 times the delay (tokio-retry's from 0–1).
    let Sched::Times(jittered, 5) = sched(&state) else {
        panic!()
    };
    assert!(
        matches!(*jittered, Sched::Jittered { min: 0.5, max: 1.5, .. }),
        "{jittered:?}"
    );
    // tokio-retry 0.3 has no `max_delay_millis`.
    let (_, mut old) = constructor(
        &path("tokio_retry::strategy::FibonacciBackoff::from_millis"),
        &[Arg::Num(10.0)],
    )
    .unwrap();
    assert_eq!(apply(&mut old, "max_delay_millis", &[Arg::Num(25.0)]), Applied::Unknown);
}

#[test]
fn backoff_defaults_stop_after_fifteen_minutes() {
    let s = summarize(&sched(&built("backoff::ExponentialBackoff::default", &[], vec![])));
    assert!(matches!(s.attempts, Attempts::AtMost(_)), "{:?}", s.attempts);
    assert_eq!(s.gap, Gap::Capped(60_000.0));
    assert_eq!(s.jitter, Jitter::Yes);
    let worst = s.worst_total_ms.unwrap();
    assert!(worst <= 900_000.0 && worst > 800_000.0, "{worst}");
    let unbounded = built(
        "backoff::ExponentialBackoff::default",
        &[],
        vec![op("=max_elapsed_time", vec![Arg::None])],
    );
    assert_eq!(summarize(&sched(&unbounded)).attempts, Attempts::Unbounded);
}

#[test]
fn reqwest_retry_needs_a_build() {
    let (_, mut state) = constructor(&path("reqwest_retry::policies::ExponentialBackoff::builder"), &[]).unwrap();
    assert!(matches!(sched(&state), Sched::Unknown));
    assert_eq!(
        apply(&mut state, "build_with_max_retries", &[Arg::Num(3.0)]),
        Applied::Ok
    );
    let s = summarize(&sched(&state));
    assert_eq!(s.attempts, Attempts::Exact(3));
    assert_eq!(s.worst_total_ms, Some(7000.0));
    let mut bad = constructor(&path("retry_policies::ExponentialBackoff::builder"), &[])
        .unwrap()
        .1;
    assert!(matches!(
        apply(&mut bad, "retry_bounds", &[Arg::Ms(3000.0), Arg::Ms(2000.0)]),
        Applied::Problem(_)
    ));
}

#[test]
fn exponential_backoff_counts_attempts_and_jitters_in_whole_percents() {
    // `default()`: 3 attempts are 2 gaps, 100 and 200 ms, jittered by up to 29 %.
    let s = summary(&built("exponential_backoff::Backoff::default", &[], vec![]));
    assert_eq!(s.attempts, Attempts::Exact(2));
    assert_eq!(s.delays.as_deref(), Some(&[100.0, 200.0][..]));
    assert_eq!(s.jitter, Jitter::Yes);
    // `None` as the maximum: the gap grows without a cap.
    let args = [Arg::Num(6.0), Arg::Ms(50.0), Arg::None];
    let s = summary(&built("exponential_backoff::Backoff::new", &args, vec![]));
    assert_eq!((s.attempts, s.gap), (Attempts::Exact(5), Gap::Growing));
    // 0.01 is one percent: `rng.u32(0..2)` moves no delay; 0.005 draws from an empty range.
    let one = built(
        "exponential_backoff::Backoff::new",
        &[Arg::Num(4.0), Arg::Ms(50.0), Arg::Ms(1000.0)],
        vec![op("mut:set_jitter", vec![Arg::Num(0.01)])],
    );
    assert_eq!(summary(&one).jitter, Jitter::No);
    let mut tiny = one.clone();
    assert!(matches!(
        apply(&mut tiny, "mut:set_jitter", &[Arg::Num(0.005)]),
        Applied::Problem(_)
    ));
    // A setter as a statement changes the `let mut`; a by-value chain method is unknown.
    assert_eq!(apply(&mut tiny, "with_max_times", &[Arg::Num(3.0)]), Applied::Unknown);
}
