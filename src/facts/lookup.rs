//! Look-up tables over a file's facts, read on first use: the index, the analysis and the
//! rules look things up per site (a name, a binding, the retries inside a unit), and a scan
//! of a large file's lists per look-up is quadratic in its size.
//!
//! A table is read from the lists as they are; one read while the lists still grew (during
//! extraction) is not used, and extraction drops it when it ends ([`FileFacts::forget_lookups`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Binding, ClientRequest, Export, FileFacts, Import, ImportKind, RetrySite, Unit};
use crate::source::Span;

#[derive(Debug, Clone, Default)]
pub struct Lookups(OnceLock<Tables>);

#[derive(Debug, Clone)]
struct Tables {
    /// The first binding of each name, and of each span.
    bindings: HashMap<String, usize>,
    binding_spans: HashMap<Span, usize>,
    /// The first import of each local name.
    imports: HashMap<String, usize>,
    /// The first named unit of each name.
    units: HashMap<String, usize>,
    /// Whether the retry sites and the requests are in the order of their starts (the
    /// order a walk of the tree meets them): a range of them is then found by bisection.
    sites_in_order: bool,
    requests_in_order: bool,
    /// How long each list was when the tables were read.
    counts: [usize; 5],
}

fn counts(facts: &FileFacts) -> [usize; 5] {
    [
        facts.bindings.len(),
        facts.imports.len(),
        facts.units.len(),
        facts.retry_sites.len(),
        facts.client_requests.len(),
    ]
}

/// The first position of each key.
fn first_of<K: std::hash::Hash + Eq>(keys: impl Iterator<Item = K>) -> HashMap<K, usize> {
    let mut out = HashMap::new();
    for (at, key) in keys.enumerate() {
        out.entry(key).or_insert(at);
    }
    out
}

impl Lookups {
    fn of(&self, facts: &FileFacts) -> Option<&Tables> {
        let tables = self.0.get_or_init(|| Tables {
            bindings: first_of(facts.bindings.iter().map(|b| b.name.clone())),
            binding_spans: first_of(facts.bindings.iter().map(|b| b.span)),
            imports: first_of(facts.imports.iter().map(|i| i.local.clone())),
            units: {
                let mut units = HashMap::new();
                for (at, unit) in facts.units.iter().enumerate() {
                    if let Some(name) = &unit.name {
                        units.entry(name.clone()).or_insert(at);
                    }
                }
                units
            },
            sites_in_order: facts.retry_sites.is_sorted_by_key(|s| s.span.start),
            requests_in_order: facts.client_requests.is_sorted_by_key(|r| r.span.start),
            counts: counts(facts),
        });
        (tables.counts == counts(facts)).then_some(tables)
    }
}

/// The items of `items` (in order of their starts) that start within `span`.
fn starting_within<T>(items: &[T], span: Span, start: impl Fn(&T) -> u32) -> &[T] {
    let from = items.partition_point(|item| start(item) < span.start);
    let to = items.partition_point(|item| start(item) <= span.end);
    &items[from..to.max(from)]
}

impl FileFacts {
    pub fn binding(&self, name: &str) -> Option<&Binding> {
        match self.lookups.of(self) {
            Some(tables) => tables.bindings.get(name).map(|&at| &self.bindings[at]),
            None => self.bindings.iter().find(|b| b.name == name),
        }
    }

    /// The binding declared at `span`.
    pub fn binding_at(&self, span: Span) -> Option<&Binding> {
        match self.lookups.of(self) {
            Some(tables) => tables.binding_spans.get(&span).map(|&at| &self.bindings[at]),
            None => self.bindings.iter().find(|b| b.span == span),
        }
    }

    /// The modules this module re-exports from, as written (and as resolved, for an import
    /// read through an alias): its `export … from` statements' and the imports its own export
    /// clauses name. A module re-exports nothing else.
    pub fn reexport_sources(&self) -> Vec<String> {
        let mut sources: Vec<String> = Vec::new();
        for export in &self.exports {
            match export {
                Export::Named { source, .. } | Export::Namespace { source, .. } | Export::Star { source } => {
                    sources.push(source.clone())
                }
                Export::Local { local, .. } => {
                    if let Some(import) = self.import(local).filter(|i| !matches!(i.kind, ImportKind::Default)) {
                        sources.push(import.source.clone());
                        sources.push(import.written_source().to_string());
                    }
                }
            }
        }
        sources.sort_unstable();
        sources.dedup();
        sources
    }

    pub fn import(&self, local: &str) -> Option<&Import> {
        match self.lookups.of(self) {
            Some(tables) => tables.imports.get(local).map(|&at| &self.imports[at]),
            None => self.imports.iter().find(|i| i.local == local),
        }
    }

    /// The first named unit called `name`.
    pub fn unit_named(&self, name: &str) -> Option<&Unit> {
        match self.lookups.of(self) {
            Some(tables) => tables.units.get(name).map(|&at| &self.units[at]),
            None => self.units.iter().find(|u| u.name.as_deref() == Some(name)),
        }
    }

    /// The retry sites that may lie within `span`, in order: at least every one that does
    /// (all of them, when they are not in the order of their starts).
    pub fn retry_sites_within(&self, span: Span) -> &[RetrySite] {
        match self.lookups.of(self) {
            Some(tables) if tables.sites_in_order => starting_within(&self.retry_sites, span, |s| s.span.start),
            _ => &self.retry_sites,
        }
    }

    /// The requests through named clients that may lie within `span`, in order (as
    /// [`FileFacts::retry_sites_within`]).
    pub fn client_requests_within(&self, span: Span) -> &[ClientRequest] {
        match self.lookups.of(self) {
            Some(tables) if tables.requests_in_order => starting_within(&self.client_requests, span, |r| r.span.start),
            _ => &self.client_requests,
        }
    }

    /// Drops the look-up tables read so far (extraction, which may look names up while it
    /// adds them, ends with this).
    pub(crate) fn forget_lookups(&mut self) {
        self.lookups = Lookups::default();
    }
}
