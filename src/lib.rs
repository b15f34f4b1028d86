//! retrylint: a policy linter for retry and scheduling code.
//!
//! The pipeline flows one way: [`discover`] → [`extract`] (parallel, per file, the tree is
//! dropped there) → [`project`] (cross-file index) → [`rules`] (parallel) → [`render`].

pub mod baseline;
pub mod changed;
pub mod check;
pub mod config;
pub mod discover;
pub mod effect_version;
pub mod extract;
pub mod facts;
pub mod fingerprint;
pub mod fix;
pub mod jobs;
pub mod lsp;
pub mod policy;
pub mod project;
pub mod render;
pub mod replay;
pub mod rules;
pub mod schedule;
pub mod sql;
pub mod suppress;
