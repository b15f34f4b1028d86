//! Prints a file's tree as tree-sitter sees it: `cargo run --example sexp -- FILE`.
use retrylint::extract::parse_recovering;
use retrylint::source::Language;

fn main() {
    let path = std::env::args().nth(1).expect("usage: sexp FILE");
    let text = std::fs::read(&path).expect("readable file");
    let language = Language::from_path(path.as_ref()).expect("a .ts, .tsx or .rs file");
    let tree = parse_recovering(language, &text).expect("parsed");
    println!("{}", tree.root_node().to_sexp());
}
