//! Policies built apart from the retries that use them: a strategy bound to a `let` and
//! shared by several sites of its function (`let backoff = ExponentialBackoff::default();`
//! then three `backoff::future::retry(backoff.clone(), …)`) is one policy, reported once
//! where it is built, with the sites as its uses.

use std::collections::HashMap;

use crate::facts::{PolicyArg, RetrySite};
use crate::source::Span;

/// Marks the sites whose policy is a local `let` that another site uses too.
pub(super) fn mark_shared_locals(sites: &mut [RetrySite]) {
    let mut uses: HashMap<Span, usize> = HashMap::new();
    for site in sites.iter() {
        if let PolicyArg::Rust(arg) = &site.policy {
            if let (Some((_, pattern)), Some(_)) = (&arg.local, &arg.chain) {
                *uses.entry(*pattern).or_default() += 1;
            }
        }
    }
    for site in sites.iter_mut() {
        if let PolicyArg::Rust(arg) = &mut site.policy {
            if let Some((_, pattern)) = &arg.local {
                arg.shared = uses.get(pattern).is_some_and(|n| *n > 1);
            }
        }
    }
}
