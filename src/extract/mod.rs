//! Parse + extract: one file's text in, [`FileFacts`] out. The tree is dropped before the
//! function returns; nothing here knows where the file is or what the configuration says
//! (the prefilter excepted), so facts can be cached by the file's content.

mod component;
mod generated;
mod lineage;
mod prefilter;
mod rs2;
mod rust;
pub mod sql;
mod sql_text;
mod suppressions;
mod typescript;
mod unread;
pub mod work;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

pub use generated::is_generated;
pub use prefilter::{Because, Kept, Prefilter, Relevance, Trigger};

use crate::facts::FileFacts;
use crate::source::Language;

/// Bumped whenever extraction changes what it produces: cached facts of another version are
/// not reused.
pub const FACTS_VERSION: u32 = 37;

thread_local! {
    // One parser per rayon worker and language: parsers are reused, never shared.
    static PARSERS: RefCell<[Option<Parser>; 3]> = const { RefCell::new([None, None, None]) };
}

pub fn parse(language: Language, text: &[u8]) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = match language {
            Language::TypeScript => 0,
            // JavaScript (and components, once masked) read with the TSX grammar.
            Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue => 1,
            Language::Rust => 2,
            // No tree-sitter grammar: `.sql` files go to the SQL parser whole.
            Language::Sql => return None,
            Language::Json | Language::Yaml => return rs2::parse(language, text),
        };
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut parser = Parser::new();
            let grammar: tree_sitter::Language = match language {
                Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue => {
                    tree_sitter_typescript::LANGUAGE_TSX.into()
                }
                Language::Rust | Language::Sql | Language::Json | Language::Yaml => tree_sitter_rust::LANGUAGE.into(),
            };
            parser
                .set_language(&grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        if deep_and_broken(text) || operands_missing(text, language == Language::Rust) {
            return None;
        }
        parse_within_budget(parser, text).0
    })
}

/// Work tree-sitter may spend on a file, in progress callbacks (one per 100 of its
/// operations, a count that does not depend on the machine): [`PARSE_WORK_PER_KB`] for each
/// kilobyte, and [`PARSE_WORK_FLOOR`] for any file.
///
/// The recovery-cost scan ([`operands_missing`]) predicts the nests of errors it knows; this
/// bounds the rest. The fuzzer found error recovery taking 30 s over 40 KB of TypeScript whose
/// broken chains sit inside what the scan reads as strings (`"…")${ +…` on a line where the
/// recovery skips the quote and reads on as code: 1,005 callbacks a kilobyte). Real code needs
/// far less (`examples/deep_prefix.rs --work DIR`): at most 16 a kilobyte over the Effect
/// repository's 1,487 TypeScript files, 13 over quickwit's 866 Rust files, 57 over the 13,158
/// Rust files of this machine's crate sources (`icu_collections`' data tables); the budget is
/// 4.5 times that. A callback of recovery is slow (up to a millisecond), so the budget bounds
/// such a file's parse to seconds, linear in its size, and it is skipped with a note.
pub const PARSE_WORK_PER_KB: u64 = 256;
/// The budget of a small file.
pub const PARSE_WORK_FLOOR: u64 = 2_000;
/// The wall-clock time a parse may take, a second guard under the work budget. Some of
/// tree-sitter's recovery calls no progress callback (`ts_parser__do_all_potential_reductions`):
/// the fuzzer found 2,000 of `delete :` (17 KB) parsing for a minute on 109 callbacks, gaps of
/// up to 2.3 s between them. The recovery-cost scan now counts that shape; this bounds any
/// other such gap. It depends on the machine, so it is set far above real code: the largest
/// real files parse in tens of milliseconds, and a file it stops is skipped with a note, as
/// one past its work budget is.
pub const PARSE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Parses `text` unless tree-sitter's work passes its budget: the tree (none when it was
/// cancelled) and the work spent, in progress callbacks.
fn parse_within_budget(parser: &mut Parser, text: &[u8]) -> (Option<Tree>, u64) {
    let budget = PARSE_WORK_FLOOR + PARSE_WORK_PER_KB * (text.len() as u64).div_ceil(1024);
    parse_within(parser, text, budget)
}

fn parse_within(parser: &mut Parser, text: &[u8], budget: u64) -> (Option<Tree>, u64) {
    let mut work = 0u64;
    let started = std::time::Instant::now();
    let mut progress = |_: &tree_sitter::ParseState| {
        work += 1;
        if work > budget || started.elapsed() > PARSE_TIME_LIMIT {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let len = text.len();
    let tree = parser.parse_with_options(
        &mut |at: usize, _| if at < len { &text[at..] } else { &[][..] },
        None,
        Some(options),
    );
    // A parse stopped by the budget is kept in the parser and resumed by its next call, on
    // whatever text that is given: the next file (on the same rayon worker, or the next edit
    // in the language server) would get a tree of this one's bytes.
    if tree.is_none() {
        parser.reset();
    }
    (tree, work)
}

/// The work tree-sitter spends parsing `text` (progress callbacks, unbounded), for
/// `examples/deep_prefix.rs`, which measures it over a corpus.
pub fn parse_work(language: Language, text: &[u8]) -> u64 {
    let grammar: tree_sitter::Language = match language {
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        _ => tree_sitter_typescript::LANGUAGE_TSX.into(),
    };
    let mut parser = Parser::new();
    parser
        .set_language(&grammar)
        .expect("grammar matches the tree-sitter version");
    let mut work = 0u64;
    let mut progress = |_: &tree_sitter::ParseState| {
        work += 1;
        std::ops::ControlFlow::Continue(())
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let len = text.len();
    let _ = parser.parse_with_options(
        &mut |at: usize, _| if at < len { &text[at..] } else { &[][..] },
        None,
        Some(options),
    );
    work
}

/// Brackets nested deeper than this are parsed only when every one closes with its match.
/// tree-sitter's error recovery is not bounded in deep broken nesting: 40 KB of fuzzed
/// TypeScript with 7,000 levels of mismatched brackets took 18 s and 3.9 GB to parse (its
/// time goes to accepting the thousands of paths its stack holds at the end of the file),
/// where no real source file seen here nests past 25. Deep, well-matched nesting (16,000
/// blocks) parses in linear time and is read.
pub(crate) const DEEP_NESTING: usize = 256;

/// Whether `text`'s brackets nest past [`DEEP_NESTING`] and do not match: a closer of
/// another kind, one too many, or brackets left open at the end. Brackets in strings and
/// comments count too, which can only send a deep file to the note.
pub(crate) fn deep_and_broken(text: &[u8]) -> bool {
    if long_tag_run(text) {
        return true;
    }
    let mut depth = 0usize;
    let deep = text.iter().any(|&byte| {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth > DEEP_NESTING
    });
    if !deep {
        return false;
    }
    let mut open = Vec::new();
    for &byte in text {
        match byte {
            b'(' => open.push(b')'),
            b'[' => open.push(b']'),
            b'{' => open.push(b'}'),
            b')' | b']' | b'}' if open.pop() != Some(byte) => return true,
            _ => {}
        }
    }
    !open.is_empty()
}

/// Whether `text` holds more than [`DEEP_NESTING`] tags in a row, `<div><div>…` (whitespace
/// between them aside): nested type assertions or elements that no source writes, on which
/// tree-sitter's error recovery is quadratic in the run's length (a fuzzed 20 KB `.vue` script of
/// 4,000 took 2 s in release, 80 KB 29 s).
fn long_tag_run(text: &[u8]) -> bool {
    let mut run = 0usize;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'<', &text[i..]) {
        let open = i + offset;
        let name = text[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'.')
            .count();
        let close = open + 1 + name;
        let tag = name > 0 && text[open + 1].is_ascii_alphabetic() && text.get(close) == Some(&b'>');
        // Only whitespace since the previous tag keeps the run going.
        let adjacent = run > 0 && text[i..open].iter().all(u8::is_ascii_whitespace);
        run = match (tag, adjacent) {
            (true, true) => run + 1,
            (true, false) => 1,
            (false, _) => 0,
        };
        if run > DEEP_NESTING {
            return true;
        }
        i = if tag { close + 1 } else { open + 1 };
    }
    false
}

/// How much error recovery [`operands_missing`] lets a file cost before it is not parsed.
///
/// tree-sitter's error recovery is super-linear in the depth of what it holds open when the
/// errors come: a prefix operator whose operand is missing (`&,&,&,…` in Rust, `!}!}!}…`,
/// `typeof ,…`, `a = }a = }…`, `() => ;…` in TypeScript) or a closer of another kind (`[)[)…`)
/// leaves the construct open, the next one nests inside it, and each error is recovered at a
/// greater depth. 512 of `&,` (1 KB) took 9.6 s to parse in a release build and 1,024 of them
/// minutes; 64 took 0.15 s. Each error costs one per bracket level and operator left open
/// around it, so the budget is spent by about 45 errors nested in one another, or by about
/// 1,000 apart (whose recovery is linear but slow: 80 ms a kilobyte). Real code costs little:
/// at most 198 over the Effect repository's TypeScript files (template substitutions
/// scanned as code; 99 before they were) and 449 (syn's `op.rs`, a
/// file of `Token![…]` macros) over 5,255 Rust files of crates.io sources; a half-typed line
/// costs a few.
pub const RECOVERY_BUDGET: usize = 1024;

/// Whether the errors in `text` cost tree-sitter's recovery past [`RECOVERY_BUDGET`]. An error
/// here is an operator that wants
/// an operand — a prefix one where an operand may start (`!` `-` `+` `~` `&` `*` `&&` `||`,
/// `typeof` `void` `await` `delete` `new`, and TypeScript's `++` `--`), or one whose right side
/// nests (`=` and its compound forms, `**`, `=>`) — followed by a token no operand starts with
/// (`,` `;` `:` `?` a closer, an assignment, a binary operator such as `>` or `==`, the end of
/// the file), or a closer that closes nothing or another bracket. A
/// linear scan of the tokens (strings, comments and regular expressions skipped): it can
/// over-count on broken text only.
fn operands_missing(text: &[u8], rust: bool) -> bool {
    operand_recovery_cost(text, rust, RECOVERY_BUDGET) > RECOVERY_BUDGET
}

/// The cost [`operands_missing`] measures, counted until it passes `stop` (public for
/// `examples/deep_prefix.rs`, which measures it over a corpus).
pub fn operand_recovery_cost(text: &[u8], rust: bool, stop: usize) -> usize {
    recovery_cost(text, rust, stop, 0)
}

/// How deep template literals' substitutions are scanned as code (`\`${ \`${ … }\` }\``):
/// deeper ones are skipped as strings, which keeps the scan linear.
const MAX_TEMPLATE_DEPTH: usize = 4;

fn recovery_cost(text: &[u8], rust: bool, stop: usize, depth: usize) -> usize {
    // The brackets open (their closer; the file's level first, closed by nothing) and the
    // operators left open at each level, and their sum.
    let mut open: Vec<(u8, usize)> = vec![(0, 0)];
    let mut total = 0usize;
    let mut cost = 0usize;
    // Whether the last token ends an operand (`x`, `1`, `)`, a string): what follows is then
    // a binary or postfix operator, not a prefix one.
    let mut after_operand = false;
    // An operator that needs an operand was the last token.
    let mut wanting = false;
    // The last token was `.`, `?.` or `::`: a member name follows (`x.await`, `a::*`).
    let mut member = false;
    // The last token's text (a word's or a string's stands for itself), and the one before it.
    let mut previous: &[u8] = b"";
    let mut before: &[u8] = b"";
    let mut i = 0;
    let n = text.len();
    while i < n {
        let c = text[i];
        // Whitespace; a line break after an operand ends a statement (semicolons are optional).
        if c.is_ascii_whitespace() {
            if c == b'\n' && after_operand && !wanting {
                let top = open.len() - 1;
                total -= open[top].1;
                open[top].1 = 0;
            }
            i += 1;
            continue;
        }
        // Comments.
        if c == b'/' && text.get(i + 1) == Some(&b'/') {
            i = memchr::memchr(b'\n', &text[i..]).map_or(n, |p| i + p);
            continue;
        }
        if c == b'/' && text.get(i + 1) == Some(&b'*') {
            i = memchr::memmem::find(&text[i + 2..], b"*/").map_or(n, |p| i + 2 + p + 2);
            continue;
        }
        let start = i;
        // What the token is: an operand, an operator that wants one, an opener, a closer, or
        // something else (a separator, a binary operator that does not nest).
        enum Token {
            Operand,
            Modifier,
            Wants,
            Open,
            Close,
            Separator,
            Other,
        }
        let token = if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            while i < n && (text[i].is_ascii_alphanumeric() || text[i] == b'_' || text[i] == b'$' || text[i] >= 0x80) {
                i += 1;
            }
            let word = &text[start..i];
            // A key or a member (`{ delete: f }`, `new?: boolean`) is a name, not an operator;
            // no key follows `:`, `?` or an operator that wants an operand, so there `delete :`
            // is an operator missing its operand (a chain of them took a minute to parse).
            let key = !wanting
                && !matches!(previous, b":" | b"?")
                && text[i..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t'))
                    .is_some_and(|b| matches!(b, b':' | b'?'));
            let hashes = text[i..].iter().take_while(|b| **b == b'#').count();
            if rust && matches!(word, b"r" | b"br" | b"cr") && text.get(i + hashes) == Some(&b'"') {
                // A raw string, to its quote and as many `#`.
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                let body = i + hashes + 1;
                i = memchr::memmem::find(&text[body..], &close).map_or(n, |p| body + p + close.len());
                Token::Operand
            } else if member || key {
                Token::Operand
            } else if rust && matches!(word, b"mut" | b"move" | b"dyn" | b"ref") {
                Token::Modifier
            } else if !rust && !after_operand && matches!(word, b"typeof" | b"await" | b"delete" | b"new") {
                Token::Wants
            } else if !rust && !after_operand && word == b"void" {
                // `void` is a type after `:`, `<`, `,`, `[`, `(`, `|`, `&`, `=>` or `?` (`Promise<void>`,
                // `Effect<A, E, void>`, `T extends U ? void : never`); a separator skipped as an
                // error is no such token. No type is `: void :`, and `void, void` is an error's
                // chain at least as often as a type's list (`void , void ,…` took seconds).
                let next = text[i..].iter().find(|b| !matches!(b, b' ' | b'\t'));
                let chained = (previous == b":" && next == Some(&b':')) || (previous == b"," && before == b"void");
                if !chained && matches!(previous, b":" | b"<" | b"," | b"[" | b"(" | b"|" | b"&" | b"=>" | b"?") {
                    Token::Operand
                } else {
                    Token::Wants
                }
            } else {
                Token::Operand
            }
        } else if c == b'"' || c == b'`' || (c == b'\'' && !rust) {
            // A string, to its end or the line's (a template literal to its closing backtick).
            i += 1;
            // Rust's strings span lines; TypeScript's other than templates do not.
            while i < n && text[i] != c && (c == b'`' || rust || text[i] != b'\n') {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            if c == b'`' && !rust && i >= n {
                // A template literal that never closes: tree-sitter's recovery skips the
                // backtick and reads what follows as code (`\` x( +:+:…` took minutes), so
                // the scan does too.
                i = start + 1;
                Token::Other
            } else {
                let end = i.min(n);
                i = (i + 1).min(n);
                // Its substitutions are code (`\`${ +:+:… }\``): scanned as such, from the
                // first one to the closing backtick (the literal text between them costs
                // nothing unless it spells an operator with no operand).
                if c == b'`' && depth < MAX_TEMPLATE_DEPTH {
                    if let Some(at) = memchr::memmem::find(&text[start + 1..end], b"${") {
                        cost += recovery_cost(&text[start + 1 + at + 2..end], rust, stop - cost, depth + 1);
                        if cost > stop {
                            return cost;
                        }
                    }
                }
                Token::Operand
            }
        } else if c == b'\'' {
            // Rust: a lifetime or a character.
            i += 1;
            if text.get(i + 1) == Some(&b'\'') || text.get(i) == Some(&b'\\') {
                while i < n && text[i] != b'\'' && text[i] != b'\n' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(n);
            } else {
                while i < n && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                    i += 1;
                }
            }
            Token::Operand
        } else {
            // Punctuation, longest first.
            let rest = &text[i..];
            let len = [
                &b">>>="[..],
                b"**=",
                b"<<=",
                b">>=",
                b"&&=",
                b"||=",
                b"??=",
                b"===",
                b"!==",
                b"...",
                b"..=",
                b"=>",
                b"->",
                b"==",
                b"!=",
                b"<=",
                b">=",
                b"&&",
                b"||",
                b"??",
                b"?.",
                b"**",
                b"++",
                b"--",
                b"+=",
                b"-=",
                b"*=",
                b"/=",
                b"%=",
                b"&=",
                b"|=",
                b"^=",
                b"::",
                b"..",
                b"<<",
            ]
            .iter()
            .find(|op| rest.starts_with(op))
            .map_or(1, |op| op.len());
            i += len;
            let op = &rest[..len];
            if op == b"/" && !after_operand && !member {
                // A regular expression, to its closing `/` (not in a class) or the line's end.
                let mut class = false;
                while i < n && text[i] != b'\n' && (class || text[i] != b'/') {
                    match text[i] {
                        b'\\' => i += 1,
                        b'[' => class = true,
                        b']' => class = false,
                        _ => {}
                    }
                    i += 1;
                }
                i = (i + 1).min(n);
                before = previous;
                previous = b"x";
                member = false;
                after_operand = true;
                wanting = false;
                continue;
            }
            match op {
                b"(" | b"[" | b"{" => Token::Open,
                b")" | b"]" | b"}" => Token::Close,
                b"," | b";" | b":" | b"?" => Token::Separator,
                // In a Rust macro's pattern, `,*` and `,+` repeat (`$($x:expr),*`).
                b"*" | b"+" if rust && start > 1 && &text[start - 2..start] == b")," => Token::Other,
                b"!" | b"~" | b"-" | b"+" | b"&" | b"*" | b"&&" | b"||" if !after_operand && !member => Token::Wants,
                b"++" | b"--" if !rust && !after_operand && !member => Token::Wants,
                b"=" | b"**" | b"=>" => Token::Wants,
                _ if op.len() == 2 && op[1] == b'=' && !matches!(op, b"==" | b"!=" | b"<=" | b">=") => Token::Wants,
                _ if op.ends_with(b"=") && op.len() == 3 && !matches!(op, b"===" | b"!==") => Token::Wants,
                _ => Token::Other,
            }
        };
        member = matches!(&text[start..i], b"." | b"?." | b"::");
        // A binary operator where an operand was wanted (`- >`, `typeof ==`) is one missing,
        // and the operator wants its own (not `<`: a generic arrow or a cast, `= <T,>(x)`; nor
        // `|`: a union's first member, `= | A | B`, or a Rust closure).
        let binary = wanting
            && matches!(token, Token::Other)
            && matches!(
                &text[start..i],
                b">" | b">=" | b"==" | b"===" | b"!=" | b"!==" | b"<=" | b"^" | b"%" | b"<<" | b">>" | b"??"
            );
        let skipped = wanting && matches!(token, Token::Separator);
        if !skipped {
            before = previous;
            previous = &text[start..i];
        }
        // A separator, closer or the end where an operand was wanted: one missing, recovered
        // with every operator left open around it.
        // An assignment or arrow where an operand was wanted is one missing too (`&mut =`).
        let assigns = matches!(token, Token::Wants) && matches!(&text[start..i], b"=" | b"=>")
            || (text[start..i].len() >= 2
                && text[i - 1] == b'='
                && !matches!(&text[start..i], b"==" | b"!=" | b"<=" | b">=" | b"===" | b"!=="));
        let missing = wanting && (matches!(token, Token::Separator | Token::Close) || assigns || binary);
        if missing {
            cost += open.len() + total;
            if cost > stop {
                return cost;
            }
        }
        match token {
            Token::Operand => {
                after_operand = true;
                wanting = false;
            }
            Token::Modifier => {}
            Token::Wants => {
                let top = open.len() - 1;
                open[top].1 += 1;
                total += 1;
                after_operand = false;
                wanting = true;
            }
            Token::Open => {
                open.push((
                    match c {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    },
                    0,
                ));
                after_operand = false;
                wanting = false;
            }
            Token::Close => {
                if open.len() > 1 && open[open.len() - 1].0 == c {
                    total -= open.pop().map_or(0, |(_, pending)| pending);
                    after_operand = true;
                    wanting = false;
                } else if !missing {
                    // A closer that closes nothing, or another bracket, is skipped like a missing
                    // operand, and what it did not close stays open.
                    cost += open.len() + total;
                    if cost > stop {
                        return cost;
                    }
                }
            }
            Token::Separator => {
                // Skipped where an operand was wanted; otherwise it ends what was open here.
                if !missing {
                    let top = open.len() - 1;
                    total -= open[top].1;
                    open[top].1 = 0;
                    after_operand = false;
                }
            }
            Token::Other => {
                after_operand = false;
                wanting = binary;
            }
        }
    }
    if wanting {
        cost += open.len() + total;
    }
    cost
}

/// Why `parse` gave no tree for `text`, for the file's note.
pub(crate) fn unparsed_note(language: Language, text: &[u8]) -> String {
    let code = matches!(
        language,
        Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Svelte | Language::Vue | Language::Rust
    );
    if long_tag_run(text) {
        format!(
            "skipped: more than {DEEP_NESTING} tags in a row (`<a><a>…`), which retrylint does not parse (the \
             parser's error recovery is unbounded there)"
        )
    } else if deep_and_broken(text) {
        format!(
            "skipped: brackets nest more than {DEEP_NESTING} deep and do not match, which retrylint does not \
             parse (the parser's error recovery is unbounded there)"
        )
    } else if code && operands_missing(text, language == Language::Rust) {
        "skipped: operators miss their operands in nests the parser's error recovery cannot bound (`!,!,…`, \
         `&;&;…`), which retrylint does not parse"
            .to_string()
    } else {
        "skipped: the parser's error recovery went past its work or time budget on this file (or gave up), \
         so retrylint does not read it"
            .to_string()
    }
}

/// The names of one grammar, read once: kind names by id, field ids by name.
struct Names {
    kinds: Vec<&'static str>,
    /// Sorted by name, for a binary search.
    fields: Vec<(&'static str, u16)>,
}

/// The grammars' names, built on first use. A node's grammar is told apart by its kind count
/// (an FFI call that reads one field), so no lookup needs a lock, a thread local or a hash.
fn names_of(language: &tree_sitter::LanguageRef) -> Option<&'static Names> {
    static GRAMMARS: std::sync::OnceLock<Vec<(usize, Names)>> = std::sync::OnceLock::new();
    let grammars = GRAMMARS.get_or_init(|| {
        let languages: [tree_sitter::Language; 3] = [
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            tree_sitter_rust::LANGUAGE.into(),
        ];
        languages
            .iter()
            .map(|language| {
                // Kept for the process: three grammars' names, a few kilobytes.
                let leak = |name: &str| -> &'static str { Box::leak(name.to_string().into_boxed_str()) };
                let kinds = (0..language.node_kind_count())
                    .map(|id| leak(language.node_kind_for_id(id as u16).unwrap_or("")))
                    .collect();
                let mut fields: Vec<(&'static str, u16)> = (1..=language.field_count() as u16)
                    .filter_map(|id| Some((leak(language.field_name_for_id(id)?), id)))
                    .collect();
                fields.sort_unstable();
                (language.node_kind_count(), Names { kinds, fields })
            })
            .collect()
    });
    let count = language.node_kind_count();
    grammars.iter().find(|(c, _)| *c == count).map(|(_, names)| names)
}

/// `child_by_field_name` and `kind` without their costs: tree-sitter finds a field name by
/// comparing it with every field name of the grammar, on every call, and the binding checks
/// a kind's C string to be UTF-8 on every call — together a large share of extraction.
pub(crate) trait FieldExt<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>>;

    fn kind_str(&self) -> &'static str;
}

impl<'t> FieldExt<'t> for tree_sitter::Node<'t> {
    fn field(&self, name: &'static str) -> Option<tree_sitter::Node<'t>> {
        let names = names_of(&self.language())?;
        let at = names.fields.binary_search_by(|(field, _)| (*field).cmp(name)).ok()?;
        self.child_by_field_id(names.fields[at].1)
    }

    fn kind_str(&self) -> &'static str {
        work::step(1);
        names_of(&self.language())
            .and_then(|names| names.kinds.get(self.kind_id() as usize).copied())
            .unwrap_or("")
    }
}

/// How many error and missing nodes a tree holds.
pub fn count_errors(tree: &Tree) -> usize {
    count_error_nodes(tree.root_node())
}

/// How many error and missing nodes lie below `root` (subtrees without errors are skipped).
pub(crate) fn count_error_nodes(root: tree_sitter::Node) -> usize {
    let mut count = 0;
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    count
}

/// Syntax errors left in `text` after the extractor's own recovery; `None` when there is no
/// tree-sitter grammar for the language (SQL) or the parser gave up.
pub fn parse_error_count(language: Language, text: &[u8]) -> Option<usize> {
    parse_recovering(language, text).map(|tree| count_errors(&tree))
}

/// Parses `text` as the extractor does, with its error recovery (for diagnosis tools).
pub fn parse_recovering(language: Language, text: &[u8]) -> Option<Tree> {
    match language {
        Language::TypeScript | Language::Tsx => typescript::parse_with_recovery(language, text),
        Language::JavaScript => typescript::parse_with_recovery(Language::Tsx, text),
        Language::Svelte | Language::Vue => {
            let (grammar, masked) = component::scripts(text);
            typescript::parse_with_recovery(grammar, &masked)
        }
        Language::Rust | Language::Sql | Language::Json | Language::Yaml => parse(language, text),
    }
}

/// Parses `text` and extracts its facts. Never panics on bad input: text that is not UTF-8
/// becomes a note, and a bug hit while extracting becomes a note naming it.
pub fn extract_file(language: Language, text: &[u8]) -> FileFacts {
    extract_file_with(language, text, &[], Depth::Full)
}

/// How much of a file extraction reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Everything.
    Full,
    /// Everything, except — in a file that retries nothing — the named units and services,
    /// which then only matter when a retried unit elsewhere calls into the file.
    /// Reading them was a fifth of a check that parses every file; the few files a call is
    /// followed into are read again in full (`FileFacts::units_deferred`).
    Lazy,
}

/// [`extract_file`], reading the imports `aliases` names as the Effect imports they are (a
/// project module re-exports Effect; the index finds them), to `depth`.
pub fn extract_file_with(
    language: Language,
    text: &[u8],
    aliases: &[crate::facts::EffectAlias],
    depth: Depth,
) -> FileFacts {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::crash::test_hook("extract");
        extract_unguarded(language, text, aliases, depth)
    }));
    result.unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let mut facts = FileFacts::new(language, text);
        facts.note(
            None,
            format!("skipped: internal error while analysing this file ({reason}); please report it"),
        );
        facts
    })
}

fn extract_unguarded(
    language: Language,
    text: &[u8],
    aliases: &[crate::facts::EffectAlias],
    depth: Depth,
) -> FileFacts {
    let mut facts = FileFacts::new(language, text);
    facts.parsed = true;
    if std::str::from_utf8(text).is_err() {
        facts.note(None, "skipped: not valid UTF-8");
        return facts;
    }
    facts.suppressions = suppressions::scan(text);
    match language {
        Language::TypeScript | Language::Tsx => typescript::extract(&mut facts, text, language, aliases, depth),
        Language::JavaScript => typescript::extract(&mut facts, text, Language::Tsx, aliases, depth),
        Language::Svelte | Language::Vue => {
            // The template's text is masked out, so `// retrylint-ignore` outside a script
            // block is not read either.
            let (grammar, masked) = component::scripts(text);
            facts.suppressions = suppressions::scan(&masked);
            typescript::extract(&mut facts, &masked, grammar, aliases, depth);
        }
        Language::Rust => {
            // SQL string literals (leases), then the retry libraries' sites and policies.
            match parse(language, text) {
                Some(tree) => {
                    facts.syntax_errors = count_errors(&tree);
                    sql_text::rust_strings(&mut facts, text, &tree);
                    // Retries inside `select!`, `join!` and `tracing` macros are read from
                    // their unfolded token trees (same offsets).
                    match rust::unfold(text, &tree) {
                        Some((unfolded, tree, logged)) => rust::extract(&mut facts, &unfolded, &tree, &logged, depth),
                        None => rust::extract(&mut facts, text, &tree, &[], depth),
                    }
                    unread::note_unread(&mut facts, text, &tree);
                }
                None => facts.note(None, unparsed_note(language, text)),
            }
        }
        Language::Sql => sql_text::sql_file(&mut facts, text),
        Language::Json | Language::Yaml => rs2::extract(&mut facts, text),
    }
    facts.forget_lookups();
    facts
}

/// One escape sequence of a JavaScript or Rust string literal: `\n`, `\'`, `\u0041`,
/// `\u{1F600}`, `\x41`; a line continuation yields nothing.
pub(crate) fn decode_escape(escape: &str) -> Option<char> {
    let body = escape.strip_prefix('\\')?;
    let mut chars = body.chars();
    Some(match chars.next()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        'x' => char::from_u32(u32::from_str_radix(&body[1..], 16).ok()?)?,
        'u' => char::from_u32(u32::from_str_radix(body[1..].trim_matches(['{', '}']), 16).ok()?)?,
        '\n' | '\r' => return None,
        other => other,
    })
}

/// Moves a pre-order walk below `root` past the cursor's subtree: to its next sibling, or the
/// next sibling of the nearest ancestor that has one. `false` when the walk of `root` is over.
/// The one cursor step of every language's subtree walks.
pub(crate) fn step_past(cursor: &mut tree_sitter::TreeCursor, root: tree_sitter::Node) -> bool {
    loop {
        if cursor.node() == root {
            return false;
        }
        if cursor.goto_next_sibling() {
            return true;
        }
        if !cursor.goto_parent() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_parse_past_its_work_budget_is_cancelled() {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into())
            .expect("grammar");
        let text = "export const retry = (n: number) => n + 1\n".repeat(200);
        let (tree, work) = parse_within_budget(&mut parser, text.as_bytes());
        assert!(tree.is_some(), "real code is far within the budget");
        assert!(work > 1, "the callback counts work: {work}");
        let (cancelled, spent) = parse_within(&mut parser, text.as_bytes(), work / 2);
        assert!(cancelled.is_none(), "a parse past its budget gives no tree");
        assert_eq!(spent, work / 2 + 1);
        assert!(parse(Language::TypeScript, text.as_bytes()).is_some());
    }

    use super::*;

    fn cost(text: &str, rust: bool) -> usize {
        operand_recovery_cost(text.as_bytes(), rust, usize::MAX)
    }

    #[test]
    fn operators_missing_their_operands_in_a_nest_are_not_parsed() {
        // Each shape took seconds to minutes of error recovery at a few kilobytes.
        for (unit, rust) in [
            ("&,", true),
            ("&;", true),
            ("*)", true),
            ("-}", true),
            ("&mut ,", true),
            ("&?", true),
            ("&mut =", true),
            ("[)", true),
            ("m!(]", true),
            ("!,", false),
            ("!}", false),
            ("-;", false),
            ("typeof ,", false),
            ("void }", false),
            ("await ;", false),
            ("delete }", false),
            ("delete :", false),
            ("typeof ?", false),
            ("await :", false),
            ("new ?", false),
            ("void :", false),
            ("void ,", false),
            ("++ :", false),
            ("-- ,", false),
            ("- >", false),
            ("typeof ==", false),
            ("a = }", false),
            ("a = ,", false),
            ("() => ,", false),
            ("a ** ;", false),
        ] {
            let text = format!("x = {}", unit.repeat(200));
            assert!(
                operands_missing(text.as_bytes(), rust),
                "{unit:?}: {}",
                cost(&text, rust)
            );
            // A few, as in a half-typed line, are parsed.
            let few = format!("x = {}", unit.repeat(3));
            assert!(
                !operands_missing(few.as_bytes(), rust),
                "{unit:?}: {}",
                cost(&few, rust)
            );
        }
        let language = Language::Rust;
        assert!(parse(language, b"fn f() { let x = &,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,&,").is_none());
        assert!(unparsed_note(language, "&,".repeat(100).as_bytes()).contains("miss their operands"));
    }

    #[test]
    fn real_code_costs_nothing_or_little() {
        for text in [
            "const a = !b, c = -d; x = typeof y === \"string\" ? void 0 : await z\n",
            "type A = Effect.Effect<void, E, R>; const f = (): Promise<void> => g(); let t: [void, number]\n",
            "const o = { delete: () => 1, new: 2, typeof: 3 }; x!.y; x! + 1; i++; --j; a ||= b; c ??= d\n",
            "type M = { new?: boolean; delete: () => void }; type V<T> = T extends string ? void : never\n",
            "const k = a ? { await: 1 } : { new: 2 }; let o: { typeof?: number, void: 0 }\n",
            "type U = | \"a\" | \"b\"; const id = <T,>(x: T) => x; ++i; x = --j + k++; t: [void, void]\n",
            "const e: Effect.Effect<void, void, never> = f(); if (!(a > b) && -c >= d) g()\n",
            "const r = /[)}\\]]+/g; const s = \"(}]\"; const t = `${a}(]`; // ) } ]\n/* ( */\n",
            "export const run = () => () => () => Effect.retry(task, { times: 3 })\n",
            "<p>Hello, world! Don't - stop</p>\n",
        ] {
            assert!(cost(text, false) <= 4, "{text:?}: {}", cost(text, false));
        }
        for text in [
            "use a::*; use b::{c, d::*};\nfn f(&self, x: &mut Vec<&'a str>) -> Result<(), E> { let y = &mut *x; **z = -1; x?; Ok(()) }\n",
            "macro_rules! m { ($($x:expr),* $(,)?) => { $(f($x);)+ }; }\nlet c = || async move { 'a: loop { break 'a; } };\n",
            "let s = r#\"(]}\"#; let b = b'('; let c = '}'; let t = \"multi\n line ) string\";\nlet v = [..]; let w = &x[..];\n",
        ] {
            assert!(cost(text, true) <= 4, "{text:?}: {}", cost(text, true));
        }
    }

    #[test]
    fn the_grammars_are_told_apart_and_their_names_read_right() {
        let languages: [tree_sitter::Language; 3] = [
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            tree_sitter_rust::LANGUAGE.into(),
        ];
        let counts: std::collections::HashSet<usize> = languages.iter().map(|l| l.node_kind_count()).collect();
        assert_eq!(counts.len(), 3, "each grammar has its own kind count");
        for (language, text) in [
            (Language::TypeScript, "f(1)"),
            (Language::Tsx, "const a = <div>{f(1)}</div>"),
            (Language::Rust, "fn main() { f(1); }"),
        ] {
            let tree = parse(language, text.as_bytes()).unwrap();
            let mut cursor = tree.walk();
            loop {
                let node = cursor.node();
                assert_eq!(node.kind_str(), node.kind());
                if node.kind() == "call_expression" {
                    assert_eq!(node.field("function"), node.child_by_field_name("function"));
                    assert_eq!(node.field("arguments"), node.child_by_field_name("arguments"));
                    assert!(node.field("function").is_some());
                }
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break;
                    }
                }
                if cursor.node() == tree.root_node() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod nesting_tests {
    use super::*;

    /// A parse the budget stopped leaves nothing behind: the next parse on the same parser is
    /// of the next text, not the old one resumed.
    #[test]
    fn a_parse_stopped_by_its_budget_is_not_resumed_on_the_next_text() {
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_rust::LANGUAGE.into()).unwrap();
        let big: String = (0..2000).map(|i| format!("fn f{i}() {{ let x = {i}; }}\n")).collect();
        let (stopped, _) = parse_within(&mut parser, big.as_bytes(), 1);
        assert!(stopped.is_none());
        let small = b"fn main() {}\n";
        let (tree, _) = parse_within(&mut parser, small, u64::MAX);
        let tree = tree.expect("parsed");
        let root = tree.root_node();
        assert_eq!(root.end_byte(), small.len());
        assert!(!root.has_error());
    }

    #[test]
    fn deep_matched_nesting_is_parsed_and_deep_broken_nesting_is_not() {
        let matched = format!("{}{}", "{([".repeat(200), "])}".repeat(200));
        assert!(!deep_and_broken(matched.as_bytes()));
        assert!(parse(Language::TypeScript, matched.as_bytes()).is_some());
        let open = "(".repeat(DEEP_NESTING + 1);
        assert!(deep_and_broken(open.as_bytes()));
        let crossed = format!("{}{}", "(".repeat(DEEP_NESTING + 1), "]".repeat(DEEP_NESTING + 1));
        assert!(deep_and_broken(crossed.as_bytes()));
        assert!(parse(Language::Rust, crossed.as_bytes()).is_none());
        // Shallow broken code is parsed (with its errors), as before.
        let shallow = "(".repeat(DEEP_NESTING);
        assert!(!deep_and_broken(shallow.as_bytes()));
        assert!(parse(Language::TypeScript, shallow.as_bytes()).is_some());
        assert!(unparsed_note(Language::TypeScript, crossed.as_bytes()).contains("do not match"));
        // Tags in a row: a run past the limit is not parsed; as many spread out are.
        let run = "<div> ".repeat(DEEP_NESTING + 1);
        assert!(deep_and_broken(run.as_bytes()));
        assert!(unparsed_note(Language::TypeScript, run.as_bytes()).contains("tags in a row"));
        let spread = "<div>x ".repeat(DEEP_NESTING * 2);
        assert!(!deep_and_broken(spread.as_bytes()));
        let generics = "const a: Array<Map<string, number>> = [];\n".repeat(DEEP_NESTING * 2);
        assert!(!deep_and_broken(generics.as_bytes()));
    }
}
