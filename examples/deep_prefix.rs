//! How long tree-sitter takes on deep, broken prefix chains (`!!!!…`, `typeof typeof …`,
//! `<a x><a x>…`, `&&&&…`, `[[[[…`) of a given size, raw and through retrylint's extraction.
//!
//! `cargo run --release --example deep_prefix -- [SHAPE…] [--kb 10,20,40,80] [--limit SECS] [--mode raw|extract|both]`
//!
//! Each (shape, size, mode) runs in a child process killed after `--limit` seconds (default 30),
//! so a shape that takes minutes costs `--limit`. Prints one row per shape: milliseconds per size,
//! `>N s` for a child that was killed, and the growth from the first size to the last.
//! `--list` prints the shapes. The shapes are also built by tests/fuzz.rs (`deep_prefix`).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use retrylint::extract::extract_file;
use retrylint::source::Language;

/// One shape: its name, the language it is read as, text before the chain, the unit repeated
/// and text after it.
struct Shape {
    name: &'static str,
    language: Language,
    head: &'static str,
    unit: &'static str,
    tail: &'static str,
}

const fn shape(
    name: &'static str,
    language: Language,
    head: &'static str,
    unit: &'static str,
    tail: &'static str,
) -> Shape {
    Shape {
        name,
        language,
        head,
        unit,
        tail,
    }
}

use Language::{Json, Rust, Tsx, TypeScript as Ts, Yaml};

const SHAPES: &[Shape] = &[
    // Brackets: what the existing guard covers.
    shape("ts-parens", Ts, "x = ", "(", ""),
    // Prefix operators and keywords of TypeScript, their operand missing at the end.
    shape("ts-not", Ts, "x = ", "!", ""),
    shape("ts-not-x", Ts, "x = ", "!", "x"),
    shape("ts-neg", Ts, "x = ", "- ", ""),
    shape("ts-tilde", Ts, "x = ", "~", ""),
    shape("ts-mixed-ops", Ts, "x = ", "!-~+", ""),
    shape("ts-typeof", Ts, "x = ", "typeof ", ""),
    shape("ts-void", Ts, "x = ", "void ", ""),
    shape("ts-await", Ts, "x = ", "await ", ""),
    shape("ts-new", Ts, "x = ", "new ", ""),
    shape("ts-spread", Ts, "f(", "...", ""),
    shape("ts-yield", Ts, "function* g() { x = ", "yield ", ""),
    shape("ts-assign", Ts, "", "a = ", ""),
    shape("ts-ternary", Ts, "x = ", "a ? ", ""),
    shape("ts-pow", Ts, "x = ", "a ** ", ""),
    shape("ts-arrow", Ts, "x = ", "() => ", ""),
    shape("ts-arrow-bare", Ts, "x = ", "a => ", ""),
    shape("ts-if", Ts, "", "if (x) ", ""),
    shape("ts-while", Ts, "", "while (x) ", ""),
    shape("ts-label", Ts, "", "a: ", ""),
    shape("ts-decorator", Ts, "", "@a ", ""),
    shape("ts-generic", Ts, "let x: ", "A<", ""),
    shape("ts-lt", Ts, "x = ", "<", ""),
    shape("ts-assertion-not", Ts, "x = ", "<a>!", ""),
    shape("ts-template", Ts, "x = ", "`${", ""),
    shape("ts-template-braces", Ts, "x = ", "`${", "}"),
    shape("ts-neg-paren", Ts, "x = ", "-(", ""),
    shape("ts-mixed-tags-ops", Ts, "x = ", "<a>!-(", ""),
    // TSX: elements with attributes, or with text between them.
    shape("tsx-tags", Tsx, "x = ", "<div>", ""),
    shape("tsx-tags-attr", Tsx, "x = ", "<a b=\"c\">", ""),
    shape("tsx-tags-text", Tsx, "x = ", "<a>t", ""),
    shape("tsx-tags-expr", Tsx, "x = ", "<a>{", ""),
    shape("tsx-not", Tsx, "x = ", "!", ""),
    shape("tsx-typeof", Tsx, "x = ", "typeof ", ""),
    shape("tsx-mixed-tags-ops", Tsx, "x = ", "<a>!-(", ""),
    // Rust prefix operators, closures, types.
    shape("rs-and", Rust, "fn f() { let x = ", "&", ""),
    shape("rs-and-and", Rust, "fn f() { let x = ", "&&", ""),
    shape("rs-deref", Rust, "fn f() { let x = ", "*", ""),
    shape("rs-pow", Rust, "fn f() { let x = ", "**", ""),
    shape("rs-not", Rust, "fn f() { let x = ", "!", ""),
    shape("rs-neg", Rust, "fn f() { let x = ", "-", ""),
    shape("rs-ref-mut", Rust, "fn f() { let x = ", "&mut ", ""),
    shape("rs-closure", Rust, "fn f() { let x = ", "|| ", ""),
    shape("rs-closure-arg", Rust, "fn f() { let x = ", "|x| ", ""),
    shape("rs-move", Rust, "fn f() { let x = ", "move || ", ""),
    shape("rs-return", Rust, "fn f() { ", "return ", ""),
    shape("rs-range", Rust, "fn f() { let x = ", ".. ", ""),
    shape("rs-generic", Rust, "type A = ", "Vec<", ""),
    shape("rs-ref-type", Rust, "type A = ", "&'a ", ""),
    shape("rs-attr", Rust, "", "#[a] ", ""),
    shape("rs-macro", Rust, "fn f() { ", "m!(", ""),
    shape("rs-parens", Rust, "fn f() { let x = ", "(", ""),
    // JSON and YAML.
    shape("json-arrays", Json, "{\"retry\": ", "[", ""),
    shape("json-objects", Json, "{\"retry\": ", "{\"a\": ", ""),
    shape("json-crossed", Json, "{\"retry\": ", "[{", ""),
    shape("yaml-flow", Yaml, "retry: ", "[", ""),
    shape("yaml-flow-map", Yaml, "retry: ", "{a: ", ""),
    shape("yaml-tags", Yaml, "retry: ", "!t ", ""),
    shape("yaml-anchors", Yaml, "retry: ", "&a ", ""),
    shape("yaml-keys", Yaml, "retry: ", "? ", ""),
];

/// The shape's text, `bytes` long or a unit longer.
fn text(shape: &Shape, bytes: usize) -> String {
    let count = bytes.saturating_sub(shape.head.len() + shape.tail.len()) / shape.unit.len() + 1;
    let mut out = String::with_capacity(bytes + shape.unit.len());
    out.push_str(shape.head);
    if shape.tail.is_empty() {
        out.push_str(&shape.unit.repeat(count));
    } else {
        // A tail closes each unit: `` `${`${…}} ``.
        out.push_str(&shape.unit.repeat(count / 2));
        out.push_str(&shape.tail.repeat(count / 2));
    }
    out
}

/// tree-sitter alone on `text`, no guard.
fn raw_parse(language: Language, text: &[u8]) {
    let grammar: tree_sitter::Language = match language {
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Json => tree_sitter_json::LANGUAGE.into(),
        Language::Yaml => tree_sitter_yaml::LANGUAGE.into(),
        _ => tree_sitter_typescript::LANGUAGE_TSX.into(),
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar).unwrap();
    let tree = parser.parse(text, None);
    std::hint::black_box(tree);
}

/// A shape named on the command line, `LANG:UNIT` (`ts:.pipe(`, `rs:&;`): the unit after the
/// language's usual head.
fn custom(name: &str) -> Option<Shape> {
    let (language, unit) = name.split_once(':')?;
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let (language, head) = match language {
        "ts" => (Language::TypeScript, "x = "),
        "tsx" => (Language::Tsx, "x = "),
        "rs" => (Language::Rust, "fn f() { let x = "),
        "json" => (Language::Json, "{\"retry\": "),
        "yaml" => (Language::Yaml, "retry: "),
        _ => return None,
    };
    Some(shape(leak(name), language, head, leak(unit), ""))
}

fn find(name: &str) -> Shape {
    custom(name)
        .or_else(|| {
            SHAPES
                .iter()
                .find(|s| s.name == name)
                .map(|s| shape(s.name, s.language, s.head, s.unit, s.tail))
        })
        .expect("a shape")
}

fn callback_gaps(language: Language, text: &[u8]) -> (usize, Duration, Duration) {
    let grammar: tree_sitter::Language = match language {
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Json => tree_sitter_json::LANGUAGE.into(),
        Language::Yaml => tree_sitter_yaml::LANGUAGE.into(),
        _ => tree_sitter_typescript::LANGUAGE_TSX.into(),
    };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar).unwrap();
    let (mut calls, mut gap, mut last) = (0usize, Duration::ZERO, Instant::now());
    let mut progress = |_: &tree_sitter::ParseState| {
        calls += 1;
        gap = gap.max(last.elapsed());
        last = Instant::now();
        std::ops::ControlFlow::Continue(())
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let len = text.len();
    let tree = parser.parse_with_options(&mut |i, _| if i < len { &text[i..] } else { &[] }, None, Some(options));
    std::hint::black_box(tree);
    (calls, gap, last.elapsed())
}

fn child(name: &str, kb: f64, mode: &str) {
    // `file:ts:PATH` reads a file instead (the size is ignored).
    let (shape, text) = match name.strip_prefix("file:").and_then(|rest| rest.split_once(':')) {
        Some((language, path)) => {
            let shape = custom(&format!("{language}:x")).expect("a language");
            (shape, std::fs::read_to_string(path).unwrap())
        }
        None => {
            let shape = find(name);
            let text = text(&shape, (kb * 1024.0) as usize);
            (shape, text)
        }
    };
    let shape = &shape;
    let text = if mode == "under" {
        // The longest text of the shape the guard still parses: the worst it lets through.
        let rust = shape.language == Language::Rust;
        let budget = retrylint::extract::RECOVERY_BUDGET;
        let passes = |bytes: usize| {
            retrylint::extract::operand_recovery_cost(self::text(shape, bytes).as_bytes(), rust, budget) <= budget
        };
        let (mut low, mut high) = (0usize, 1 << 20);
        if passes(high) {
            low = high;
        }
        while high - low > 1 && !passes(high) {
            let mid = (low + high) / 2;
            if passes(mid) {
                low = mid
            } else {
                high = mid
            }
        }
        let text = self::text(shape, low);
        eprint!("{} bytes: ", text.len());
        text
    } else {
        text
    };
    let started = Instant::now();
    match mode {
        "raw" | "under" => raw_parse(shape.language, text.as_bytes()),
        "callback" => {
            // How often tree-sitter's progress callback sees the parse: calls, the longest gap
            // between two, and the time after the last (the accept at the end of the file).
            let (calls, gap, tail) = callback_gaps(shape.language, text.as_bytes());
            eprintln!("calls={calls} max_gap={gap:?} after_last={tail:?}");
        }
        _ => {
            std::hint::black_box(extract_file(shape.language, text.as_bytes()));
        }
    }
    println!("{}", started.elapsed().as_millis());
}

/// Runs one measurement in a child process: milliseconds, or `None` when it ran past `limit`.
fn measure(name: &str, kb: f64, mode: &str, limit: Duration) -> Option<u128> {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--child", name, &kb.to_string(), mode])
        .stdout(Stdio::piped())
        .stderr(if mode == "callback" {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// `--scan DIR…`: the recovery cost retrylint's guard measures on every TypeScript, JavaScript
/// and Rust file under the directories, the highest ones and how many files pass the budget.
fn scan(dirs: &[String]) {
    let mut costs = Vec::new();
    for dir in dirs {
        for entry in ignore::WalkBuilder::new(dir)
            .hidden(false)
            .git_ignore(false)
            .build()
            .flatten()
        {
            let path = entry.path();
            let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
                continue;
            };
            let rust = match ext {
                "rs" => true,
                "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" | "vue" | "svelte" => false,
                _ => continue,
            };
            let Ok(text) = std::fs::read(path) else { continue };
            let cost = retrylint::extract::operand_recovery_cost(&text, rust, usize::MAX);
            costs.push((cost, path.display().to_string()));
        }
    }
    costs.sort();
    let over = costs
        .iter()
        .filter(|(c, _)| *c > retrylint::extract::RECOVERY_BUDGET)
        .count();
    println!("files={} over_budget={over}", costs.len());
    for (cost, path) in costs.iter().rev().take(15) {
        println!("{cost:>8} {path}");
    }
}

/// `--work DIR…`: the work tree-sitter spends on every TypeScript, JavaScript and Rust file
/// (progress callbacks per kilobyte, the measure `extract::PARSE_WORK_PER_KB` bounds), the
/// largest first.
fn work(dirs: &[String]) {
    use retrylint::source::Language;
    let mut rates = Vec::new();
    for dir in dirs {
        for entry in ignore::WalkBuilder::new(dir)
            .hidden(false)
            .git_ignore(false)
            .build()
            .flatten()
        {
            let path = entry.path();
            let language = match path.extension().and_then(|e| e.to_str()) {
                Some("rs") => Language::Rust,
                Some("ts" | "mts" | "cts") => Language::TypeScript,
                Some("tsx" | "js" | "jsx" | "mjs" | "cjs") => Language::Tsx,
                _ => continue,
            };
            let Ok(text) = std::fs::read(path) else { continue };
            let work = retrylint::extract::parse_work(language, &text);
            let kb = (text.len() as u64).div_ceil(1024).max(1);
            rates.push((work / kb, work, path.display().to_string()));
        }
    }
    rates.sort();
    let over = rates
        .iter()
        .filter(|(_, w, p)| {
            let bytes = std::fs::metadata(p).map_or(0, |m| m.len());
            *w > retrylint::extract::PARSE_WORK_FLOOR + retrylint::extract::PARSE_WORK_PER_KB * bytes.div_ceil(1024)
        })
        .count();
    println!("files={} over_budget={over}", rates.len());
    for (rate, work, path) in rates.iter().rev().take(10) {
        println!("{rate:>8}/KB {work:>10} {path}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--work") {
        work(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("--scan") {
        scan(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("--child") {
        child(&args[1], args[2].parse().unwrap(), &args[3]);
        return;
    }
    let (mut sizes, mut limit, mut modes, mut names) =
        (vec![10.0, 20.0, 40.0, 80.0], 30u64, vec!["raw", "extract"], vec![]);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--kb" => {
                i += 1;
                sizes = args[i].split(',').map(|s| s.parse().unwrap()).collect();
            }
            "--limit" => {
                i += 1;
                limit = args[i].parse().unwrap();
            }
            "--mode" => {
                i += 1;
                modes = match args[i].as_str() {
                    "raw" => vec!["raw"],
                    "extract" => vec!["extract"],
                    "under" => vec!["under"],
                    _ => vec!["raw", "extract"],
                };
            }
            "--list" => {
                for shape in SHAPES {
                    println!("{}", shape.name);
                }
                return;
            }
            name => names.push(name.to_string()),
        }
        i += 1;
    }
    let limit = Duration::from_secs(limit);
    let header: Vec<String> = sizes.iter().map(|kb| format!("{kb} KB")).collect();
    println!("| shape | mode | {} | growth |", header.join(" | "));
    println!("|---|---|{}---|", "---|".repeat(sizes.len()));
    let mut chosen: Vec<Shape> = names.iter().filter_map(|n| custom(n)).collect();
    for s in SHAPES {
        if names.is_empty() || names.iter().any(|n| s.name.starts_with(n.as_str())) {
            chosen.push(shape(s.name, s.language, s.head, s.unit, s.tail));
        }
    }
    for shape in &chosen {
        for mode in &modes {
            let mut cells = Vec::new();
            let mut times = Vec::new();
            for &kb in &sizes {
                match measure(shape.name, kb, mode, limit) {
                    Some(ms) => {
                        cells.push(format!("{ms} ms"));
                        times.push(ms);
                    }
                    None => {
                        cells.push(format!(">{} s", limit.as_secs()));
                        // Larger sizes would only take longer.
                        break;
                    }
                }
            }
            while cells.len() < sizes.len() {
                cells.push("–".into());
            }
            let growth = match (times.first(), times.last()) {
                (Some(&a), Some(&b)) if times.len() > 1 => format!("{:.1}×", b as f64 / a.max(1) as f64),
                _ => "–".into(),
            };
            println!("| {} | {mode} | {} | {growth} |", shape.name, cells.join(" | "));
            std::io::stdout().flush().unwrap();
        }
    }
}
