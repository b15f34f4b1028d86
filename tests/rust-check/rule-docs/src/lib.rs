//! Every ```rust block of `rules/*.md`, each in a module of its own (see build.rs), type-checked
//! against the real crates by tests/rust_check.rs. The blocks are snippets of a service: the
//! names they take from the rest of it (`Error`, `retry::…`, `fetch`, a repository…) are the
//! stubs of `prelude`, which every block's module glob-imports. The library APIs they call are
//! the crates' own.
#![allow(dead_code, unused_imports, unused_variables, async_fn_in_trait)]

pub mod prelude;

/// `crate::retry` and `crate::error` of the snippets: the service's retry module and error.
pub use prelude::{error, retry};

include!(concat!(env!("OUT_DIR"), "/blocks.rs"));
