//! Differential test of the Rust retry model against the crates themselves (issue 16.6):
//! backon 1.6, tokio-retry 0.3, tokio-retry2 0.9, backoff 0.4, retry-policies 0.5
//! (reqwest-retry's policies) and exponential-backoff 2.1 are dev-dependencies. A seeded generator writes builder chains as source text;
//! retrylint extracts each one (`extract_file`) and evaluates it in its model
//! (`schedule::rust`), and the same chain is built with the real crate and its iterator or
//! policy run against an operation that fails instantly (on a virtual clock where the crate
//! reads one). For every claim the model makes — the attempt count, the first nominal
//! delays, the per-gap cap, jitter and its range — the crate must agree; what the model does
//! not know is counted per builder method and printed as a coverage table.
//!
//! Jitter is off, or seeded (backon's `with_jitter_seed`); where a crate's jitter cannot be
//! seeded (tokio-retry, tokio-retry2, backoff, retry-policies, exponential-backoff) each delay
//! must lie in the range the model claims around the nominal one. exponential-backoff's setters
//! take `&mut self`: its chains are written as a `let mut` and statements.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use retrylint::facts::RustBase;
use retrylint::schedule::rust::{self as model, Backoff};
use retrylint::schedule::{Attempts, Gap, Jitter, Sched};
use retrylint::source::Language;

/// Chains per library; with six libraries, 7,200 chains.
const PER_LIBRARY: usize = 1200;
const SEED: u64 = 16;
/// Delays drawn from a crate before a policy is called endless (the model simulates more;
/// backon's jittered Fibonacci without a maximum overflows `Duration` after ~90).
const LIMIT: usize = 64;
/// Delays compared one by one (the model keeps the first 20).
const SHOWN: usize = 20;
/// Delays beyond this many milliseconds (3 × 10^4 years) are compared as equal: the crates
/// saturate their integers there, the model's floats do not.
const HUGE_MS: f64 = 1e15;

/// splitmix64: a seeded generator with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A builder method's argument, rendered as source and applied to the real builder alike.
#[derive(Debug, Clone, Copy)]
enum A {
    None,
    /// A `Duration` in milliseconds (written `from_millis` or, when whole, `from_secs`).
    Ms(u64, bool),
    /// `Some(Duration)` / `None` for `Option<Duration>` parameters.
    OptMs(Option<u64>),
    Float(f64),
    Int(u64),
    Jitter(&'static str),
    /// A function named by path (`jitter`).
    Fn(&'static str),
    /// Two arguments: a duration and a count.
    MsInt(u64, u64),
    Ms2(u64, u64),
    /// A count and a factor (tokio-retry2's `ExponentialFactorBackoff::from_millis(ms, f)`).
    IntFloat(u64, f64),
    /// tokio-retry2's `jitter_range(lo..hi)`.
    JitterRange(u32, u32),
    /// tokio-retry2's `jitter_with_bounds(min, max)`.
    JitterBounds(f64, f64),
    /// exponential-backoff's `Backoff::new(attempts, min, max)`, `max` a `Duration` (`Some`
    /// written bare or as `Some(…)`) or `None`.
    Attempts(u64, u64, Option<u64>, bool),
}

fn duration_src(ms: u64, secs: bool) -> String {
    if secs && ms % 1000 == 0 {
        format!("Duration::from_secs({})", ms / 1000)
    } else {
        format!("Duration::from_millis({ms})")
    }
}

impl A {
    fn src(&self) -> String {
        match *self {
            A::None => String::new(),
            A::Ms(ms, secs) => duration_src(ms, secs),
            A::OptMs(Some(ms)) => format!("Some({})", duration_src(ms, false)),
            A::OptMs(None) => "None".into(),
            A::Float(f) => format!("{f:?}"),
            A::Int(n) => n.to_string(),
            A::Jitter(j) => format!("Jitter::{j}"),
            A::Fn(f) => f.to_string(),
            A::MsInt(ms, n) => format!("{}, {n}", duration_src(ms, false)),
            A::Ms2(a, b) => format!("{}, {}", duration_src(a, false), duration_src(b, false)),
            A::IntFloat(n, f) => format!("{n}, {f:?}"),
            A::JitterRange(lo, hi) => format!("jitter_range({lo}..{hi})"),
            A::JitterBounds(lo, hi) => format!("jitter_with_bounds({lo:?}, {hi:?})"),
            A::Attempts(n, min, max, wrapped) => format!(
                "{n}, {}, {}",
                duration_src(min, false),
                match (max, wrapped) {
                    (None, _) => "None".to_string(),
                    (Some(max), false) => duration_src(max, true),
                    (Some(max), true) => format!("Some({})", duration_src(max, true)),
                }
            ),
        }
    }
    fn ms(&self) -> Duration {
        match *self {
            A::Ms(ms, _) | A::MsInt(ms, _) => Duration::from_millis(ms),
            _ => unreachable!("{self:?}"),
        }
    }
    fn int(&self) -> u64 {
        match *self {
            A::Int(n) | A::MsInt(_, n) => n,
            _ => unreachable!("{self:?}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Lib {
    Backon,
    TokioRetry,
    TokioRetry2,
    Backoff,
    RetryPolicies,
    ExponentialBackoff,
}

/// A generated chain: the constructor (how it is written, and a key for the real one), its
/// methods, and the jitter seed.
#[derive(Debug, Clone)]
struct Chain {
    lib: Lib,
    ctor: &'static str,
    ctor_arg: A,
    ops: Vec<(&'static str, A)>,
    /// Struct literal fields (backoff): written `Type { field: value, ..Default::default() }`.
    literal: bool,
    seed: u64,
}

impl Chain {
    fn source(&self) -> String {
        let uses = match self.lib {
            Lib::Backon => "use backon::{ConstantBuilder, ExponentialBuilder, FibonacciBuilder};",
            Lib::TokioRetry => {
                "use tokio_retry::strategy::{jitter, ExponentialBackoff, FibonacciBackoff, FixedInterval};"
            }
            Lib::TokioRetry2 => {
                "use tokio_retry2::strategy::{jitter, jitter_range, jitter_with_bounds, ExponentialBackoff, ExponentialFactorBackoff, FibonacciBackoff, FixedInterval, LinearBackoff};"
            }
            Lib::Backoff => "use backoff::backoff::{Constant, Stop, Zero};\nuse backoff::{ExponentialBackoff, ExponentialBackoffBuilder};",
            Lib::RetryPolicies => "use retry_policies::policies::ExponentialBackoff;\nuse retry_policies::Jitter;",
            Lib::ExponentialBackoff => "use exponential_backoff::Backoff;",
        };
        format!(
            "{uses}\nuse std::time::Duration;\n\npub fn policy() -> Policy {{\n    {}\n}}\n",
            self.expr()
        )
    }

    fn expr(&self) -> String {
        if self.lib == Lib::ExponentialBackoff {
            let mut out = format!("let mut b = {}({});", self.ctor, self.ctor_arg.src());
            for (method, arg) in &self.ops {
                out.push_str(&format!("\n    b.{method}({});", arg.src()));
            }
            return out + "\n    b";
        }
        if self.literal {
            let fields: Vec<String> = self
                .ops
                .iter()
                .map(|(m, a)| format!("{}: {}", m.trim_start_matches('='), a.src()))
                .collect();
            let mut fields = fields;
            if self.ctor == "ExponentialBackoff" {
                fields.push("..Default::default()".into());
            }
            return format!("{} {{ {} }}", self.ctor, fields.join(", "));
        }
        let mut out = format!("{}({})", self.ctor, self.ctor_arg.src());
        for (method, arg) in &self.ops {
            out.push_str(&format!("\n        .{method}({})", arg.src()));
        }
        out
    }

    /// Whether the chain, as written, draws its delays at random (the last setting wins).
    fn jittered(&self) -> bool {
        let mut jitter = match (self.lib, self.ctor) {
            // backoff's exponential policy randomizes by 0.5 unless told otherwise;
            // retry-policies' builder starts with `Jitter::Full`.
            (Lib::Backoff, "ExponentialBackoff" | "ExponentialBackoffBuilder::new" | "ExponentialBackoff::default") => {
                true
            }
            (Lib::RetryPolicies, _) => true,
            (Lib::ExponentialBackoff, _) => return self.exponential_jittered(),
            _ => false,
        };
        for (method, arg) in &self.ops {
            match (*method, arg) {
                // `jitter_range` draws one integer for the whole strategy: from one value it
                // is a constant factor; `jitter_with_bounds(a, a)` likewise.
                ("map", A::JitterRange(lo, hi)) => jitter = *hi > lo + 1,
                ("map", A::JitterBounds(lo, hi)) => jitter = hi > lo,
                ("with_jitter" | "map", _) => jitter = true,
                ("jitter", A::Jitter(j)) => jitter = *j != "None",
                ("with_randomization_factor" | "=randomization_factor", A::Float(f)) => jitter = *f > 0.0,
                _ => {}
            }
        }
        jitter
    }

    /// exponential-backoff: whether its jitter, in whole percents, moves a delay (over 1 %),
    /// and a delay can move (some gap lies between `min` and `max`: the crate clamps to them).
    fn exponential_jittered(&self) -> bool {
        let (mut attempts, mut min, mut max, mut jitter) = match self.ctor_arg {
            A::Attempts(n, min, max, _) => (n, min, max, 0.3f32),
            _ => (3, 100, Some(10_000), 0.3),
        };
        for (method, arg) in &self.ops {
            match (*method, arg) {
                ("set_jitter", A::Float(f)) => jitter = *f as f32,
                ("set_min", A::Ms(ms, _)) => min = *ms,
                ("set_max", A::Ms(ms, _)) => max = Some(*ms),
                ("set_max_attempts", A::Int(n)) => attempts = *n,
                _ => {}
            }
        }
        (jitter * 100f32) as u32 > 1 && max.is_none_or(|max| max > min) && attempts >= 2
    }

    /// Every method's name, for the coverage table.
    fn methods(&self) -> Vec<String> {
        let lib = format!("{:?}", self.lib);
        let mut out = vec![format!("{lib} {}", self.ctor)];
        out.extend(
            self.ops
                .iter()
                .map(|(m, _)| format!("{lib} .{}", m.trim_start_matches('='))),
        );
        out
    }
}

fn ms_value(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => rng.range(1, 50),
        1 => rng.range(10, 2000),
        2 => rng.range(1, 30) * 1000,
        _ => rng.pick(&[100, 250, 500, 1000, 5000, 60_000]),
    }
}

fn generate(lib: Lib, rng: &mut Rng) -> Chain {
    let seed = rng.next();
    let mut chain = Chain {
        lib,
        ctor: "",
        ctor_arg: A::None,
        ops: Vec::new(),
        literal: false,
        seed,
    };
    let count = rng.range(0, 5);
    match lib {
        Lib::Backon => {
            chain.ctor = rng.pick(&[
                "ExponentialBuilder::default",
                "ExponentialBuilder::new",
                "ConstantBuilder::default",
                "FibonacciBuilder::default",
            ]);
            let methods: &[&str] = match chain.ctor {
                "ConstantBuilder::default" => &["with_delay", "with_max_times", "without_max_times", "with_jitter"],
                "FibonacciBuilder::default" => &[
                    "with_min_delay",
                    "with_max_delay",
                    "without_max_delay",
                    "with_max_times",
                    "without_max_times",
                    "with_jitter",
                ],
                _ => &[
                    "with_factor",
                    "with_min_delay",
                    "with_max_delay",
                    "without_max_delay",
                    "with_max_times",
                    "without_max_times",
                    "with_total_delay",
                    "with_jitter",
                ],
            };
            for _ in 0..count {
                let method = rng.pick(methods);
                let arg = match method {
                    "with_factor" => A::Float(rng.pick(&[1.0, 1.5, 2.0, 2.5, 3.0])),
                    "with_min_delay" | "with_max_delay" | "with_delay" => A::Ms(ms_value(rng), rng.chance(50)),
                    "with_max_times" => A::Int(rng.range(0, 8)),
                    "with_total_delay" => A::OptMs(if rng.chance(80) {
                        Some(rng.range(1, 20) * 500)
                    } else {
                        None
                    }),
                    _ => A::None,
                };
                chain.ops.push((method, arg));
            }
        }
        Lib::TokioRetry | Lib::TokioRetry2 => {
            let ctors: &[&'static str] = match lib {
                // tokio-retry2's two strategies of its own.
                Lib::TokioRetry2 => &[
                    "ExponentialBackoff::from_millis",
                    "FibonacciBackoff::from_millis",
                    "FixedInterval::from_millis",
                    "FixedInterval::new",
                    "ExponentialFactorBackoff::from_millis",
                    "ExponentialFactorBackoff::from_factor",
                    "LinearBackoff::from_millis",
                    "LinearBackoff::new",
                    "LinearBackoff::from_secs",
                ],
                _ => &[
                    "ExponentialBackoff::from_millis",
                    "FibonacciBackoff::from_millis",
                    "FixedInterval::from_millis",
                    "FixedInterval::new",
                ],
            };
            chain.ctor = rng.pick(ctors);
            let factor = |rng: &mut Rng| rng.pick(&[1.0, 1.5, 2.0, 2.5, 3.0, 10.0]);
            chain.ctor_arg = match chain.ctor {
                "ExponentialBackoff::from_millis" => A::Int(rng.range(1, 10)),
                "FixedInterval::new" | "LinearBackoff::new" => A::Ms(ms_value(rng), rng.chance(50)),
                "ExponentialFactorBackoff::from_millis" => A::IntFloat(ms_value(rng), factor(rng)),
                "ExponentialFactorBackoff::from_factor" => A::Float(factor(rng)),
                "LinearBackoff::from_secs" => A::Int(rng.range(0, 5)),
                _ => A::Int(rng.range(1, 500)),
            };
            if !chain.ctor.starts_with("Fixed") {
                // tokio-retry2's strategies also take `max_delay_millis(ms)`.
                let methods: &[&'static str] = match (lib, chain.ctor) {
                    (Lib::TokioRetry2, ctor) if ctor.starts_with("ExponentialFactor") => {
                        &["initial_delay", "max_delay", "max_delay_millis"]
                    }
                    (Lib::TokioRetry2, ctor) if ctor.starts_with("Linear") => &[
                        "increment",
                        "increment_millis",
                        "increment_secs",
                        "max_delay",
                        "max_delay_millis",
                    ],
                    (Lib::TokioRetry2, _) => &["factor", "max_delay", "max_delay_millis"],
                    _ => &["factor", "max_delay"],
                };
                for _ in 0..rng.range(0, 3) {
                    let method = rng.pick(methods);
                    let arg = match method {
                        "factor" => A::Int(rng.pick(&[1, 2, 10, 25, 100, 1000])),
                        "max_delay_millis" | "initial_delay" | "increment_millis" => A::Int(ms_value(rng)),
                        "increment_secs" => A::Int(rng.range(0, 4)),
                        _ => A::Ms(ms_value(rng), rng.chance(50)),
                    };
                    chain.ops.push((method, arg));
                }
            }
            // The iterator adapters, in either order.
            let mut adapters = Vec::new();
            if rng.chance(40) {
                let jitter = match lib {
                    Lib::TokioRetry2 => match rng.below(4) {
                        0 => {
                            let lo = rng.range(0, 3) as u32;
                            A::JitterRange(lo, lo + rng.range(1, 4) as u32)
                        }
                        1 => {
                            let lo = rng.pick(&[0.0, 0.5, 1.0]);
                            A::JitterBounds(lo, lo + rng.pick(&[0.0, 0.5, 1.0]))
                        }
                        _ => A::Fn("jitter"),
                    },
                    _ => A::Fn("jitter"),
                };
                adapters.push(("map", jitter));
            }
            for _ in 0..rng.range(0, 2) {
                adapters.push(("take", A::Int(rng.range(0, 10))));
            }
            if rng.chance(50) {
                adapters.reverse();
            }
            chain.ops.extend(adapters);
        }
        Lib::Backoff => {
            let form = rng.below(10);
            let fields = [
                "initial_interval",
                "randomization_factor",
                "multiplier",
                "max_interval",
                "max_elapsed_time",
            ];
            let value = |rng: &mut Rng, field: &str| match field {
                "initial_interval" | "max_interval" => A::Ms(ms_value(rng), rng.chance(50)),
                "randomization_factor" => A::Float(rng.pick(&[0.0, 0.0, 0.25, 0.5])),
                "multiplier" => A::Float(rng.pick(&[1.0, 1.5, 2.0, 3.0])),
                _ => A::OptMs(if rng.chance(85) {
                    Some(rng.range(1, 40) * 250)
                } else {
                    None
                }),
            };
            match form {
                0 => {
                    chain.ctor = "Constant::new";
                    chain.ctor_arg = A::Ms(ms_value(rng), false);
                }
                1 => {
                    chain.ctor = rng.pick(&["Zero", "Stop"]);
                    chain.literal = true;
                }
                2..=4 => {
                    chain.ctor = "ExponentialBackoff";
                    chain.literal = true;
                    let mut chosen: Vec<&str> = fields.to_vec();
                    chosen.retain(|_| rng.chance(55));
                    for field in chosen {
                        let field: &'static str = match field {
                            "initial_interval" => "=initial_interval",
                            "randomization_factor" => "=randomization_factor",
                            "multiplier" => "=multiplier",
                            "max_interval" => "=max_interval",
                            _ => "=max_elapsed_time",
                        };
                        let arg = value(rng, field.trim_start_matches('='));
                        chain.ops.push((field, arg));
                    }
                }
                5..=7 => {
                    chain.ctor = "ExponentialBackoffBuilder::new";
                    for _ in 0..count {
                        let field = rng.pick(&fields);
                        let method: &'static str = match field {
                            "initial_interval" => "with_initial_interval",
                            "randomization_factor" => "with_randomization_factor",
                            "multiplier" => "with_multiplier",
                            "max_interval" => "with_max_interval",
                            _ => "with_max_elapsed_time",
                        };
                        let arg = value(rng, field);
                        chain.ops.push((method, arg));
                    }
                    chain.ops.push(("build", A::None));
                }
                _ => chain.ctor = "ExponentialBackoff::default",
            }
        }
        Lib::RetryPolicies => {
            chain.ctor = "ExponentialBackoff::builder";
            for _ in 0..rng.range(0, 3) {
                let method = rng.pick(&["retry_bounds", "jitter", "base"]);
                let arg = match method {
                    "retry_bounds" => {
                        let lo = ms_value(rng);
                        A::Ms2(lo, lo + rng.pick(&[0, 100, 1000, 10_000, 60_000]))
                    }
                    "jitter" => A::Jitter(rng.pick(&["None", "None", "Full", "Bounded"])),
                    _ => A::Int(rng.range(1, 5)),
                };
                chain.ops.push((method, arg));
            }
            let build = rng.pick(&[
                "build_with_max_retries",
                "build_with_total_retry_duration",
                "build_with_total_retry_duration_and_limit_retries",
                "build_with_total_retry_duration_and_max_retries",
            ]);
            let total = rng.range(1, 60) * 500;
            let arg = match build {
                "build_with_max_retries" => A::Int(rng.range(0, 10)),
                "build_with_total_retry_duration_and_max_retries" => A::MsInt(total, rng.range(0, 10)),
                _ => A::Ms(total, false),
            };
            chain.ops.push((build, arg));
        }
        Lib::ExponentialBackoff => {
            // `min ≤ max` (`Duration::clamp` panics otherwise), factors whose powers fit a u32
            // over the attempts drawn.
            let ms = |rng: &mut Rng| rng.pick(&[1, 10, 50, 100, 250, 500, 1000, 5000]);
            let min = ms(rng);
            let max = |rng: &mut Rng, min: u64| match rng.below(3) {
                0 => None,
                _ => Some(min * rng.pick(&[1, 2, 5, 30, 100, 1000])),
            };
            if rng.chance(20) {
                chain.ctor = "Backoff::default";
            } else {
                chain.ctor = "Backoff::new";
                chain.ctor_arg = A::Attempts(rng.range(0, 12), min, max(rng, min), rng.chance(30));
            }
            for _ in 0..rng.range(0, 3) {
                let method = rng.pick(&["set_factor", "set_jitter", "set_max_attempts", "set_max"]);
                let arg = match method {
                    "set_factor" => A::Int(rng.pick(&[1, 2, 3])),
                    "set_jitter" => A::Float(rng.pick(&[0.0, 0.0, 0.01, 0.1, 0.3, 0.5, 1.0])),
                    "set_max_attempts" => A::Int(rng.range(0, 12)),
                    _ => {
                        let floor = match chain.ctor_arg {
                            A::Attempts(_, min, _, _) => min,
                            _ => 100,
                        };
                        A::Ms(floor * rng.pick(&[1, 3, 20]), true)
                    }
                };
                chain.ops.push((method, arg));
            }
        }
    }
    chain
}

/// What retrylint claims about a chain: its configuration through the extractor and the model.
fn model_of(chain: &Chain) -> Option<Backoff> {
    let facts = retrylint::extract::extract_file(Language::Rust, chain.source().as_bytes());
    let policy = facts.rust_policies.first()?;
    let RustBase::New { state, .. } = &policy.value.base else {
        return None;
    };
    let mut state = state.clone();
    for op in &policy.value.ops {
        if model::apply(&mut state, &op.method, &op.args) != model::Applied::Ok {
            return None;
        }
    }
    Some(state)
}

// ----- the crates -----

thread_local! {
    /// backoff's virtual clock: milliseconds slept so far.
    static SLEPT: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    static EPOCH: Instant = Instant::now();
}

#[derive(Debug, Default, Clone)]
struct VirtualClock;

impl backoff::Clock for VirtualClock {
    fn now(&self) -> Instant {
        EPOCH.with(|e| *e) + SLEPT.with(Cell::get)
    }
}

/// The delays the real crate waits, up to `LIMIT` (more means it never stops), running the
/// chain as written, jitter and all (backon's seeded).
fn real(chain: &Chain) -> Vec<f64> {
    let mut delays: Vec<Duration> = Vec::new();
    match chain.lib {
        Lib::Backon => {
            use backon::BackoffBuilder;
            let seeded = chain.jittered();
            let iter: Box<dyn Iterator<Item = Duration>> = match chain.ctor {
                "ConstantBuilder::default" => {
                    let mut b = backon::ConstantBuilder::default();
                    for (m, a) in &chain.ops {
                        b = match *m {
                            "with_delay" => b.with_delay(a.ms()),
                            "with_max_times" => b.with_max_times(a.int() as usize),
                            "without_max_times" => b.without_max_times(),
                            "with_jitter" => b.with_jitter(),
                            _ => unreachable!(),
                        };
                    }
                    if seeded {
                        b = b.with_jitter_seed(chain.seed);
                    }
                    Box::new(b.build())
                }
                "FibonacciBuilder::default" => {
                    let mut b = backon::FibonacciBuilder::default();
                    for (m, a) in &chain.ops {
                        b = match *m {
                            "with_min_delay" => b.with_min_delay(a.ms()),
                            "with_max_delay" => b.with_max_delay(a.ms()),
                            "without_max_delay" => b.without_max_delay(),
                            "with_max_times" => b.with_max_times(a.int() as usize),
                            "without_max_times" => b.without_max_times(),
                            "with_jitter" => b.with_jitter(),
                            _ => unreachable!(),
                        };
                    }
                    if seeded {
                        b = b.with_jitter_seed(chain.seed);
                    }
                    Box::new(b.build())
                }
                _ => {
                    let mut b = match chain.ctor {
                        "ExponentialBuilder::new" => backon::ExponentialBuilder::new(),
                        _ => backon::ExponentialBuilder::default(),
                    };
                    for (m, a) in &chain.ops {
                        b = match (*m, a) {
                            ("with_factor", A::Float(f)) => b.with_factor(*f as f32),
                            ("with_min_delay", _) => b.with_min_delay(a.ms()),
                            ("with_max_delay", _) => b.with_max_delay(a.ms()),
                            ("without_max_delay", _) => b.without_max_delay(),
                            ("with_max_times", _) => b.with_max_times(a.int() as usize),
                            ("without_max_times", _) => b.without_max_times(),
                            ("with_total_delay", A::OptMs(d)) => b.with_total_delay(d.map(Duration::from_millis)),
                            ("with_jitter", _) => b.with_jitter(),
                            _ => unreachable!(),
                        };
                    }
                    if seeded {
                        b = b.with_jitter_seed(chain.seed);
                    }
                    Box::new(b.build())
                }
            };
            delays.extend(iter.take(LIMIT + 1));
        }
        Lib::TokioRetry => {
            use tokio_retry::strategy::{jitter, ExponentialBackoff, FibonacciBackoff, FixedInterval};
            let own = chain.ops.iter().filter(|(m, _)| matches!(*m, "factor" | "max_delay"));
            let mut iter: Box<dyn Iterator<Item = Duration>> = match chain.ctor {
                "ExponentialBackoff::from_millis" => {
                    let mut s = ExponentialBackoff::from_millis(chain.ctor_arg.int());
                    for (m, a) in own {
                        s = if *m == "factor" {
                            s.factor(a.int())
                        } else {
                            s.max_delay(a.ms())
                        };
                    }
                    Box::new(s)
                }
                "FibonacciBackoff::from_millis" => {
                    let mut s = FibonacciBackoff::from_millis(chain.ctor_arg.int());
                    for (m, a) in own {
                        s = if *m == "factor" {
                            s.factor(a.int())
                        } else {
                            s.max_delay(a.ms())
                        };
                    }
                    Box::new(s)
                }
                "FixedInterval::new" => Box::new(FixedInterval::new(chain.ctor_arg.ms())),
                _ => Box::new(FixedInterval::from_millis(chain.ctor_arg.int())),
            };
            for (m, a) in &chain.ops {
                iter = match *m {
                    "map" => Box::new(iter.map(jitter)),
                    "take" => Box::new(iter.take(a.int() as usize)),
                    _ => iter,
                };
            }
            delays.extend(iter.take(LIMIT + 1));
        }
        Lib::TokioRetry2 => {
            use tokio_retry2::strategy::{
                jitter, jitter_range, jitter_with_bounds, ExponentialBackoff, ExponentialFactorBackoff,
                FibonacciBackoff, FixedInterval, LinearBackoff,
            };
            let own = chain.ops.iter().filter(|(m, _)| {
                matches!(
                    *m,
                    "factor"
                        | "max_delay"
                        | "max_delay_millis"
                        | "initial_delay"
                        | "increment"
                        | "increment_millis"
                        | "increment_secs"
                )
            });
            let mut iter: Box<dyn Iterator<Item = Duration>> = match chain.ctor {
                "ExponentialBackoff::from_millis" => {
                    let mut s = ExponentialBackoff::from_millis(chain.ctor_arg.int());
                    for (m, a) in own {
                        s = match *m {
                            "factor" => s.factor(a.int()),
                            "max_delay_millis" => s.max_delay_millis(a.int()),
                            _ => s.max_delay(a.ms()),
                        };
                    }
                    Box::new(s)
                }
                "FibonacciBackoff::from_millis" => {
                    let mut s = FibonacciBackoff::from_millis(chain.ctor_arg.int());
                    for (m, a) in own {
                        s = match *m {
                            "factor" => s.factor(a.int()),
                            "max_delay_millis" => s.max_delay_millis(a.int()),
                            _ => s.max_delay(a.ms()),
                        };
                    }
                    Box::new(s)
                }
                "ExponentialFactorBackoff::from_millis" | "ExponentialFactorBackoff::from_factor" => {
                    let mut s = match chain.ctor_arg {
                        A::IntFloat(ms, f) => ExponentialFactorBackoff::from_millis(ms, f),
                        A::Float(f) => ExponentialFactorBackoff::from_factor(f),
                        other => unreachable!("{other:?}"),
                    };
                    for (m, a) in own {
                        s = match *m {
                            "initial_delay" => s.initial_delay(a.int()),
                            "max_delay_millis" => s.max_delay_millis(a.int()),
                            _ => s.max_delay(a.ms()),
                        };
                    }
                    Box::new(s)
                }
                "LinearBackoff::from_millis" | "LinearBackoff::new" | "LinearBackoff::from_secs" => {
                    let mut s = match chain.ctor {
                        "LinearBackoff::new" => LinearBackoff::new(chain.ctor_arg.ms()),
                        "LinearBackoff::from_secs" => LinearBackoff::from_secs(chain.ctor_arg.int()),
                        _ => LinearBackoff::from_millis(chain.ctor_arg.int()),
                    };
                    for (m, a) in own {
                        s = match *m {
                            "increment" => s.increment(a.ms()),
                            "increment_millis" => s.increment_millis(a.int()),
                            "increment_secs" => s.increment_secs(a.int()),
                            "max_delay_millis" => s.max_delay_millis(a.int()),
                            _ => s.max_delay(a.ms()),
                        };
                    }
                    Box::new(s)
                }
                "FixedInterval::new" => Box::new(FixedInterval::new(chain.ctor_arg.ms())),
                _ => Box::new(FixedInterval::from_millis(chain.ctor_arg.int())),
            };
            for (m, a) in &chain.ops {
                iter = match (*m, *a) {
                    ("map", A::JitterRange(lo, hi)) => Box::new(iter.map(jitter_range(lo..hi))),
                    ("map", A::JitterBounds(lo, hi)) => Box::new(iter.map(jitter_with_bounds(lo, hi))),
                    ("map", _) => Box::new(iter.map(jitter)),
                    ("take", _) => Box::new(iter.take(a.int() as usize)),
                    _ => iter,
                };
            }
            delays.extend(iter.take(LIMIT + 1));
        }
        Lib::Backoff => {
            use backoff::backoff::Backoff as _;
            type Exp = backoff::exponential::ExponentialBackoff<VirtualClock>;
            let mut policy: Box<dyn backoff::backoff::Backoff> = match chain.ctor {
                "Constant::new" => Box::new(backoff::backoff::Constant::new(chain.ctor_arg.ms())),
                "Zero" => Box::new(backoff::backoff::Zero {}),
                "Stop" => Box::new(backoff::backoff::Stop {}),
                "ExponentialBackoffBuilder::new" => {
                    let mut b = backoff::exponential::ExponentialBackoffBuilder::<VirtualClock>::new();
                    for (m, a) in &chain.ops {
                        match (*m, a) {
                            ("with_initial_interval", _) => b.with_initial_interval(a.ms()),
                            ("with_randomization_factor", A::Float(f)) => b.with_randomization_factor(*f),
                            ("with_multiplier", A::Float(f)) => b.with_multiplier(*f),
                            ("with_max_interval", _) => b.with_max_interval(a.ms()),
                            ("with_max_elapsed_time", A::OptMs(d)) => {
                                b.with_max_elapsed_time(d.map(Duration::from_millis))
                            }
                            ("build", _) => &mut b,
                            _ => unreachable!(),
                        };
                    }
                    Box::new(b.build())
                }
                _ => {
                    let mut b = Exp::default();
                    for (m, a) in &chain.ops {
                        match (*m, a) {
                            ("=initial_interval", _) => b.initial_interval = a.ms(),
                            ("=randomization_factor", A::Float(f)) => b.randomization_factor = *f,
                            ("=multiplier", A::Float(f)) => b.multiplier = *f,
                            ("=max_interval", _) => b.max_interval = a.ms(),
                            ("=max_elapsed_time", A::OptMs(d)) => b.max_elapsed_time = d.map(Duration::from_millis),
                            _ => unreachable!(),
                        }
                    }
                    Box::new(b)
                }
            };
            // `retry` resets the policy before the first attempt, then sleeps each delay.
            SLEPT.with(|s| s.set(Duration::ZERO));
            policy.reset();
            while delays.len() <= LIMIT {
                let Some(delay) = policy.next_backoff() else { break };
                SLEPT.with(|s| s.set(s.get() + delay));
                delays.push(delay);
            }
        }
        Lib::ExponentialBackoff => {
            let mut b = match chain.ctor_arg {
                A::Attempts(n, min, max, _) => exponential_backoff::Backoff::new(
                    n as u32,
                    Duration::from_millis(min),
                    max.map(Duration::from_millis),
                ),
                _ => exponential_backoff::Backoff::default(),
            };
            for (m, a) in &chain.ops {
                match (*m, a) {
                    ("set_factor", A::Int(n)) => b.set_factor(*n as u32),
                    ("set_jitter", A::Float(f)) => b.set_jitter(*f as f32),
                    ("set_max_attempts", A::Int(n)) => b.set_max_attempts(*n as u32),
                    ("set_max", _) => b.set_max(a.ms()),
                    _ => unreachable!(),
                }
            }
            // The code's own loop: a delay before each retry, `None` on the last attempt.
            for delay in &b {
                match delay {
                    Some(delay) if delays.len() <= LIMIT => delays.push(delay),
                    _ => break,
                }
            }
        }
        Lib::RetryPolicies => {
            use retry_policies::policies::ExponentialBackoff;
            use retry_policies::{Jitter, RetryDecision, RetryPolicy};
            let mut b = ExponentialBackoff::builder();
            let mut policy: Option<Box<dyn RetryPolicy>> = None;
            for (m, a) in &chain.ops {
                match (*m, a) {
                    ("retry_bounds", A::Ms2(lo, hi)) => {
                        b = b.retry_bounds(Duration::from_millis(*lo), Duration::from_millis(*hi))
                    }
                    ("jitter", A::Jitter(j)) => {
                        b = b.jitter(match *j {
                            "None" => Jitter::None,
                            "Full" => Jitter::Full,
                            _ => Jitter::Bounded,
                        })
                    }
                    ("base", _) => b = b.base(a.int() as u32),
                    ("build_with_max_retries", _) => {
                        policy = Some(Box::new(b.build_with_max_retries(a.int() as u32)));
                        break;
                    }
                    ("build_with_total_retry_duration", _) => {
                        policy = Some(Box::new(b.build_with_total_retry_duration(a.ms())));
                        break;
                    }
                    ("build_with_total_retry_duration_and_limit_retries", _) => {
                        policy = Some(Box::new(b.build_with_total_retry_duration_and_limit_retries(a.ms())));
                        break;
                    }
                    ("build_with_total_retry_duration_and_max_retries", _) => {
                        policy = Some(Box::new(
                            b.build_with_total_retry_duration_and_max_retries(a.ms(), a.int() as u32),
                        ));
                        break;
                    }
                    _ => unreachable!(),
                }
            }
            let policy = policy.expect("every generated chain is built");
            // The policy reads the wall clock: the request started as long ago as the
            // delays so far, and the delay is when it says to retry, from now.
            // The crate reads the clock itself, somewhere between our two readings: a reading
            // taken while this thread was preempted (a loaded machine) is taken again, so the
            // delay is known to within the window, far below the comparison's tolerance.
            const WINDOW: Duration = Duration::from_micros(100);
            let mut elapsed = Duration::ZERO;
            while delays.len() <= LIMIT {
                let (before, decision) = (0..1000)
                    .map(|_| {
                        let before = SystemTime::now();
                        let decision = policy.should_retry(before - elapsed, delays.len() as u32);
                        let window = SystemTime::now().duration_since(before).unwrap_or_default();
                        (before, decision, window)
                    })
                    .find(|(_, _, window)| *window < WINDOW)
                    .map(|(before, decision, _)| (before, decision))
                    .expect("a clock reading without preemption in 1000 tries");
                match decision {
                    RetryDecision::DoNotRetry => break,
                    RetryDecision::Retry { execute_after } => {
                        let delay = execute_after.duration_since(before).unwrap_or_default();
                        // Whole microseconds: the clock moved between the two readings.
                        let delay = Duration::from_micros(delay.as_micros() as u64);
                        elapsed += delay;
                        delays.push(delay);
                    }
                }
            }
        }
    }
    delays.iter().map(|d| d.as_secs_f64() * 1000.0).collect()
}

/// The range jitter draws a delay from, as multiples of the nominal delay (or, for backon's
/// Fibonacci, an added amount), as the model claims it.
#[derive(Debug, Clone, Copy)]
enum Range {
    Scale(f64, f64),
    Add(f64),
}

fn jitter_range(sched: &Sched) -> Option<Range> {
    match sched {
        Sched::Jittered { min, max, .. } => Some(Range::Scale(*min, *max)),
        Sched::JitteredAdd { max, .. } => Some(Range::Add(*max)),
        Sched::Times(inner, _) | Sched::While(inner, _) => jitter_range(inner),
        Sched::Max(children) | Sched::Min(children) => children.iter().find_map(jitter_range),
        _ => None,
    }
}

fn close(a: f64, b: f64, tolerance_ms: f64) -> bool {
    let (a, b) = (a.min(HUGE_MS), b.min(HUGE_MS));
    (a - b).abs() <= tolerance_ms.max(1e-5 * a.abs().max(b.abs()))
}

/// Compares the model's claims with what the crate did; `Err` names the first disagreement.
/// `Ok(false)` when the model claims nothing (unknown).
fn compare(chain: &Chain, state: &Backoff, real: &[f64]) -> Result<bool, String> {
    // retry-policies reads the wall clock: its delays are good to a fraction of a millisecond.
    // tokio-retry2's ExponentialFactorBackoff truncates each delay to whole milliseconds.
    let tolerance = if chain.lib == Lib::RetryPolicies {
        0.5
    } else if chain.ctor.starts_with("ExponentialFactorBackoff") {
        // A millisecond, times the largest factor a `jitter_range`/`jitter_with_bounds` applies.
        chain
            .ops
            .iter()
            .map(|(_, a)| match *a {
                A::JitterRange(_, hi) => f64::from(hi.saturating_sub(1)),
                A::JitterBounds(_, hi) => hi,
                _ => 1.0,
            })
            .fold(1.0, f64::max)
    } else {
        1e-3
    };
    let summary = model::summary(state);
    let jittered = chain.jittered();
    // Jitter is claimed for every chain that draws its delays, unless it never waits (not
    // once, or only zero delays: tokio-retry2's `LinearBackoff::from_secs(0)…take(1)`).
    if real.iter().any(|&d| d > 0.0) && summary.jitter != if jittered { Jitter::Yes } else { Jitter::No } {
        return Err(format!("jitter: model {:?}, chain jittered {jittered}", summary.jitter));
    }
    let Some(nominal) = summary.delays.clone() else {
        return Ok(false);
    };
    let time_limited = model::time_limit(state).is_some() || matches!(state, Backoff::Reqwest { total: Some(_), .. });
    if jittered && time_limited {
        // How many delays fit depends on the draws: only the bound and the worst case are claimed.
        if let Some(n) = summary.attempts.bound() {
            if real.len() as u64 > n {
                return Err(format!("attempts: model at most {n}, crate {}", real.len()));
            }
        }
        if let Some(worst) = summary.worst_total_ms {
            let total: f64 = real.iter().sum();
            if total > worst + tolerance * real.len() as f64 + 1e-5 * worst {
                return Err(format!("total wait: model at most {worst} ms, crate {total} ms"));
            }
        }
        return Ok(true);
    }
    let count = real.len();
    let stopped = count <= LIMIT;
    match summary.attempts {
        Attempts::Exact(n) if n as usize <= LIMIT => {
            if count as u64 != n {
                return Err(format!("attempts: model {n}, crate {count}"));
            }
        }
        Attempts::Exact(_) | Attempts::Unbounded => {
            if stopped {
                return Err(format!(
                    "attempts: model {:?}, crate stopped after {count}",
                    summary.attempts
                ));
            }
        }
        Attempts::AtMost(n) => {
            if count as u64 > n {
                return Err(format!("attempts: model at most {n}, crate {count}"));
            }
        }
        Attempts::TimeLimited => {
            if !stopped {
                return Err("attempts: model time-limited, crate never stopped".into());
            }
        }
        Attempts::Unknown => return Ok(false),
    }
    // The first delays, one by one: nominal ones, or inside the jitter range around them.
    let range = jittered.then(|| jitter_range(&model::sched(state))).flatten();
    if jittered && range.is_none() {
        return Err("jitter: the model claims jitter but no range".into());
    }
    let shown = count.min(SHOWN);
    // A list of delays shorter than the model shows is a claim that the policy stops there.
    if nominal.len() < SHOWN && nominal.len() != count {
        return Err(format!(
            "attempts: model stops after {} delays, crate {count}",
            nominal.len()
        ));
    }
    if nominal.len() < shown {
        return Err(format!("delays: model knows {} of the first {shown}", nominal.len()));
    }
    for (i, (&r, &m)) in real.iter().zip(&nominal).take(shown).enumerate() {
        let ok = match range {
            None => close(r, m, tolerance),
            Some(Range::Scale(lo, hi)) => {
                let (lo, hi) = (m * lo, m * hi);
                // retry-policies' Bounded draws from [min/2, delay]: only the top is claimed.
                let lo = if matches!(
                    state,
                    Backoff::Reqwest {
                        jitter: model::ReqwestJitter::Bounded,
                        ..
                    }
                ) {
                    0.0
                } else {
                    lo
                };
                r.min(HUGE_MS) + tolerance >= lo.min(HUGE_MS) * (1.0 - 1e-5) && r <= hi * (1.0 + 1e-5) + tolerance
            }
            Some(Range::Add(add)) => r + tolerance >= m && r <= (m + add) * (1.0 + 1e-5) + tolerance,
        };
        if !ok {
            return Err(format!(
                "delay {}: model {m} ms{}, crate {r} ms",
                i + 1,
                range.map(|r| format!(" jittered {r:?}")).unwrap_or_default()
            ));
        }
    }
    // The per-gap cap holds for every delay the crate waited.
    if let (Gap::Capped(cap), None) = (summary.gap, range) {
        if let Some(over) = real.iter().find(|&&r| r > cap + tolerance + 1e-5 * cap) {
            return Err(format!("gap: model capped at {cap} ms, crate waited {over} ms"));
        }
    }
    Ok(true)
}

#[derive(Default)]
struct Tally {
    chains: usize,
    known: usize,
}

#[test]
fn the_model_agrees_with_the_crates() {
    let mut rng = Rng(SEED);
    let mut coverage: BTreeMap<String, Tally> = BTreeMap::new();
    let mut per_lib: BTreeMap<Lib, Tally> = BTreeMap::new();
    let mut disagreements = Vec::new();
    for lib in [
        Lib::Backon,
        Lib::TokioRetry,
        Lib::TokioRetry2,
        Lib::Backoff,
        Lib::RetryPolicies,
        Lib::ExponentialBackoff,
    ] {
        for _ in 0..PER_LIBRARY {
            let chain = generate(lib, &mut rng);
            let real = real(&chain);
            let known = match model_of(&chain) {
                None => false,
                Some(state) => match compare(&chain, &state, &real) {
                    Ok(known) => known,
                    Err(why) => {
                        disagreements.push(format!("{why}\n{}", chain.source()));
                        true
                    }
                },
            };
            if !known && std::env::var_os("RUST_ORACLE_UNKNOWN").is_some() {
                println!("unknown to the model:\n{}", chain.source());
            }
            let tally = per_lib.entry(lib).or_default();
            tally.chains += 1;
            tally.known += usize::from(known);
            for method in chain.methods() {
                let tally = coverage.entry(method).or_default();
                tally.chains += 1;
                tally.known += usize::from(known);
            }
        }
    }
    println!("Rust retry model against the crates (seed {SEED}): chains, known to the model");
    for (lib, tally) in &per_lib {
        println!("  {:<14} {:>5} {:>5}", format!("{lib:?}"), tally.chains, tally.known);
    }
    println!("per builder method: chains using it, known to the model");
    for (method, tally) in &coverage {
        println!("  {method:<70} {:>5} {:>5}", tally.chains, tally.known);
    }
    let total: usize = per_lib.values().map(|t| t.chains).sum();
    println!("{total} chains, {} disagreements", disagreements.len());
    assert!(
        disagreements.is_empty(),
        "{} of {total} chains disagree; the first:\n{}",
        disagreements.len(),
        disagreements.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
    // The model must claim something for nearly every chain the generator writes: a model
    // that went silent would pass the comparison vacuously.
    for (lib, tally) in &per_lib {
        assert!(
            tally.known * 100 >= tally.chains * 95,
            "{lib:?}: the model knows only {} of {} chains",
            tally.known,
            tally.chains
        );
    }
}

fn chain(lib: Lib, ctor: &'static str, ctor_arg: A, ops: Vec<(&'static str, A)>) -> Chain {
    Chain {
        lib,
        ctor,
        ctor_arg,
        ops,
        literal: false,
        seed: 1,
    }
}

/// The comparison fails on a wrong claim: the model's view of one chain against the crate's
/// run of another that differs by one retry, or by one delay.
#[test]
fn a_wrong_claim_is_caught() {
    let three = chain(
        Lib::Backon,
        "ExponentialBuilder::default",
        A::None,
        vec![("with_max_times", A::Int(3))],
    );
    let four = chain(
        Lib::Backon,
        "ExponentialBuilder::default",
        A::None,
        vec![("with_max_times", A::Int(4))],
    );
    let state = model_of(&three).expect("known");
    assert_eq!(compare(&three, &state, &real(&three)), Ok(true));
    let err = compare(&three, &state, &real(&four)).unwrap_err();
    assert!(err.contains("attempts: model 3, crate 4"), "{err}");
    // One delay off by a millisecond.
    let mut delays = real(&three);
    delays[1] += 1.0;
    let err = compare(&three, &state, &delays).unwrap_err();
    assert!(err.starts_with("delay 2"), "{err}");
    // Jitter claimed where the crate has none.
    let jittered = chain(
        Lib::Backon,
        "ExponentialBuilder::default",
        A::None,
        vec![("with_jitter", A::None)],
    );
    let err = compare(&three, &model_of(&jittered).unwrap(), &real(&three)).unwrap_err();
    assert!(err.starts_with("jitter"), "{err}");
    // tokio-retry2's jitter scales by 0.5–1.5, tokio-retry's by 0–1: a delay 1.4 times the
    // nominal one is inside the first range only.
    let ops = || vec![("map", A::Fn("jitter")), ("take", A::Int(3))];
    let two = chain(Lib::TokioRetry2, "FixedInterval::from_millis", A::Int(100), ops());
    let one = chain(Lib::TokioRetry, "FixedInterval::from_millis", A::Int(100), ops());
    let drawn = [140.0, 60.0, 100.0];
    assert_eq!(compare(&two, &model_of(&two).unwrap(), &drawn), Ok(true));
    let err = compare(&one, &model_of(&one).unwrap(), &drawn).unwrap_err();
    assert!(err.starts_with("delay 1"), "{err}");
    let err = compare(&two, &model_of(&two).unwrap(), &[40.0, 100.0, 100.0]).unwrap_err();
    assert!(err.starts_with("delay 1"), "{err}");
}

/// Exact values, read in the crates' sources, for one chain of each library.
#[test]
fn known_chains_give_the_crates_delays() {
    let cases: Vec<(Chain, Vec<f64>)> = vec![
        (
            chain(Lib::Backon, "ExponentialBuilder::default", A::None, vec![]),
            vec![1000.0, 2000.0, 4000.0],
        ),
        (
            chain(
                Lib::TokioRetry,
                "ExponentialBackoff::from_millis",
                A::Int(10),
                vec![("take", A::Int(3))],
            ),
            vec![10.0, 100.0, 1000.0],
        ),
        (
            chain(
                Lib::TokioRetry2,
                "FibonacciBackoff::from_millis",
                A::Int(10),
                vec![("max_delay_millis", A::Int(25)), ("take", A::Int(5))],
            ),
            vec![10.0, 10.0, 20.0, 25.0, 25.0],
        ),
        (
            chain(
                Lib::TokioRetry2,
                "ExponentialFactorBackoff::from_millis",
                A::IntFloat(10, 2.5),
                vec![("max_delay_millis", A::Int(30)), ("take", A::Int(4))],
            ),
            vec![10.0, 25.0, 30.0, 30.0],
        ),
        (
            chain(
                Lib::TokioRetry2,
                "LinearBackoff::from_millis",
                A::Int(100),
                vec![
                    ("increment_millis", A::Int(50)),
                    ("max_delay_millis", A::Int(220)),
                    ("map", A::JitterRange(2, 3)),
                    ("take", A::Int(4)),
                ],
            ),
            vec![200.0, 300.0, 400.0, 440.0],
        ),
        (
            chain(
                Lib::Backoff,
                "ExponentialBackoffBuilder::new",
                A::None,
                vec![
                    ("with_randomization_factor", A::Float(0.0)),
                    ("with_max_elapsed_time", A::OptMs(Some(2000))),
                    ("build", A::None),
                ],
            ),
            vec![500.0, 750.0],
        ),
        (
            chain(
                Lib::RetryPolicies,
                "ExponentialBackoff::builder",
                A::None,
                vec![("jitter", A::Jitter("None")), ("build_with_max_retries", A::Int(3))],
            ),
            vec![1000.0, 2000.0, 4000.0],
        ),
    ];
    for (chain, expected) in cases {
        let real = real(&chain);
        assert_eq!(real.len(), expected.len(), "{}", chain.source());
        for (r, e) in real.iter().zip(&expected) {
            assert!(close(*r, *e, 0.5), "{} crate {real:?}", chain.source());
        }
        let state = model_of(&chain).expect("known");
        let summary = model::summary(&state);
        assert_eq!(
            summary.attempts.bound(),
            Some(expected.len() as u64),
            "{}",
            chain.source()
        );
        assert_eq!(summary.delays.as_deref(), Some(&expected[..]), "{}", chain.source());
        assert_eq!(compare(&chain, &state, &real), Ok(true));
    }
}

/// tokio-retry2's `max_interval(ms)` reads the wall clock (`std::time::Instant`, which no test
/// can move): the strategy is run with real sleeps, 100 ms apart against a 250 ms limit, so
/// a delay either side of the limit is 50 ms away from it. The model claims at most three
/// delays (the operation's own time can only make it fewer), and the crate waits three.
#[test]
fn max_interval_stops_on_elapsed_time() {
    use tokio_retry2::strategy::{FixedInterval, MaxInterval};
    let source = "use tokio_retry2::strategy::{FixedInterval, MaxInterval};\n\
                  pub fn policy() -> Policy { FixedInterval::from_millis(100).max_interval(250) }\n";
    let facts = retrylint::extract::extract_file(Language::Rust, source.as_bytes());
    let policy = facts.rust_policies.first().expect("a policy");
    let RustBase::New { state, .. } = &policy.value.base else {
        panic!("{:?}", policy.value)
    };
    let mut state = state.clone();
    for op in &policy.value.ops {
        assert_eq!(
            model::apply(&mut state, &op.method, &op.args),
            model::Applied::Ok,
            "{op:?}"
        );
    }
    let summary = model::summary(&state);
    assert_eq!(summary.attempts, Attempts::AtMost(3));
    assert_eq!(summary.delays.as_deref(), Some(&[100.0, 100.0, 100.0][..]));
    let mut waited = Vec::new();
    for delay in FixedInterval::from_millis(100).max_interval(250).take(10) {
        std::thread::sleep(delay);
        waited.push(delay.as_millis() as f64);
    }
    assert_eq!(waited, [100.0, 100.0, 100.0]);
}
