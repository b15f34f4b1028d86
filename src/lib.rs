//! retrylint: a policy linter for retry and scheduling code.
//!
//! The pipeline flows one way, and so do the modules (a test reads the `use crate::` graph
//! and fails on a cycle):
//!
//! [`workspace`] (the front door: finds the project and its configs, owns what is kept between
//! runs, and assembles the rest) → [`discover`] → [`extract`] (parallel, per file; the tree is dropped there) → [`index`]
//! (cross-file resolution; files a resolution needs are extracted on demand) → [`analysis`]
//! (policies evaluated in the [`schedule`] model, units, durable retriers) → [`rules`]
//! (parallel, read-only) → [`check`] (suppressions, baselines, changed lines) → [`render`] |
//! [`fix`] | [`lsp`].
//!
//! Below them: [`source`] (spans, files, the line index), [`diagnostic`] (findings),
//! [`config`], [`facts`] (what extraction produces) and the [`cache`] of facts.

pub mod analysis;
pub mod baseline;
pub mod cache;
pub mod changed;
pub mod check;
pub mod config;
pub mod crash;
pub mod diagnostic;
pub mod discover;
pub mod effect_version;
pub mod extract;
pub mod facts;
pub mod files;
pub mod fingerprint;
pub mod fix;
pub mod index;
pub mod init;
pub mod lsp;
pub mod render;
mod rule_tester;
pub mod rules;
pub mod schedule;
pub mod settings;
pub mod source;
pub mod workspace;
