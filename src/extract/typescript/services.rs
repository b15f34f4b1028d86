//! The services a unit reaches: locals bound to a service tag in the blocks around it
//! (`const orders = yield* Orders`), and the services a file implements
//! (`Effect.Service` classes, `Layer.effect(Tag, …)`) with their methods as units.

use std::cell::OnceCell;
use std::rc::Rc;

use super::FieldExt;
use super::Lineage;
use tree_sitter::Node;

use super::units::{named_units_with, text, Bindings};

use crate::facts::{ServiceDef, Unit};

/// The services bound in the blocks around a walk (`const orders = yield* Orders`), each
/// block's read once, when a unit inside it first asks: a unit reads them from the block's
/// ancestors, and reading them anew per unit is a walk up the tree per unit.
#[derive(Default)]
pub struct EnclosingServices<'t> {
    /// The statement blocks on the walk's path, outermost first: where each is on the path,
    /// and (read on first use) the services bound in it and in the blocks around it, the
    /// innermost first, as a unit takes them.
    blocks: Vec<(usize, Node<'t>, OnceCell<Services>)>,
}

/// Services bound to locals, `(local, tag)`, shared by the blocks that add none.
type Services = Rc<Vec<(String, String)>>;

impl<'t> EnclosingServices<'t> {
    /// Follows a walk to the node at the end of `path` (the walk's path from its root).
    pub fn visit(&mut self, path: &[Node<'t>]) {
        while let Some((at, block, _)) = self.blocks.last() {
            if path.get(*at) == Some(block) {
                break;
            }
            self.blocks.pop();
        }
        if let Some(&top) = path.last() {
            let at = path.len() - 1;
            if top.kind_str() == "statement_block" && self.blocks.last().is_none_or(|(last, _, _)| *last != at) {
                self.blocks.push((at, top, OnceCell::new()));
            }
        }
    }

    /// Starts following a walk whose path is `path` (the blocks on it come first).
    pub fn visit_all(&mut self, path: &[Node<'t>]) {
        for (at, node) in path.iter().enumerate() {
            if node.kind_str() == "statement_block" {
                self.blocks.push((at, *node, OnceCell::new()));
            }
        }
    }

    /// The services bound in the blocks of the walk's path around `node` (not `node`
    /// itself), the innermost block's first, without repeated names, as many as a unit keeps.
    pub fn around(&self, source: &[u8], node: Node<'t>) -> Services {
        let spans = |block: Node| block.start_byte() <= node.start_byte() && node.end_byte() <= block.end_byte();
        let mut count = self.blocks.partition_point(|(_, block, _)| spans(*block));
        if count > 0 && self.blocks[count - 1].1 == node {
            count -= 1;
        }
        let Some(innermost) = count.checked_sub(1) else {
            return Rc::default();
        };
        // Read down from the innermost block already read (without recursion: a nest may be
        // deep).
        let known = (0..=innermost).rev().find(|&at| self.blocks[at].2.get().is_some());
        let mut around: Services = match known {
            Some(at) => Rc::clone(self.blocks[at].2.get().expect("read")),
            None => Rc::default(),
        };
        for (_, block, services) in &self.blocks[known.map_or(0, |at| at + 1)..=innermost] {
            let own = block_services(source, *block);
            if !own.is_empty() {
                let mut merged: Vec<(String, String)> = Vec::new();
                for bound in own.into_iter().chain(around.iter().cloned()) {
                    if merged.len() >= MAX_SERVICES {
                        break;
                    }
                    if !merged.iter().any(|(local, _)| *local == bound.0) {
                        merged.push(bound);
                    }
                }
                around = Rc::new(merged);
            }
            let _ = services.set(Rc::clone(&around));
        }
        around
    }
}

/// The services a block's own declarations bind (`const orders = yield* Orders`), in order.
pub(super) fn block_services(source: &[u8], block: Node) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cursor = block.walk();
    for statement in block.named_children(&mut cursor) {
        if !matches!(statement.kind_str(), "lexical_declaration" | "variable_declaration") {
            continue;
        }
        let mut inner = statement.walk();
        for declarator in statement.named_children(&mut inner) {
            if let Some(bound) = service_local(source, declarator) {
                out.push(bound);
            }
        }
    }
    out
}

/// Service locals kept per unit.
pub(super) const MAX_SERVICES: usize = 32;

/// `const orders = yield* OrdersRepository`: the local and the service tag it is bound to.
pub(super) fn service_local(source: &[u8], declarator: Node) -> Option<(String, String)> {
    let name = declarator.field("name").filter(|n| n.kind_str() == "identifier")?;
    let value = declarator
        .field("value")
        .filter(|v| v.kind_str() == "yield_expression")?;
    // `yield*` delegates; a plain `yield` does not run an Effect.
    let delegates = value.child(1).is_some_and(|star| star.kind_str() == "*");
    let tag = value.named_child(0).filter(|t| t.kind_str() == "identifier")?;
    let tag = text(source, tag);
    // A tag is a class or a constant: `OrdersRepository`, not `yield* makeOrders()`.
    (delegates && tag.starts_with(|c: char| c.is_ascii_uppercase()))
        .then(|| (text(source, name).to_string(), tag.to_string()))
}

/// Services kept per file.
const MAX_SERVICE_DEFS: usize = 64;

/// The services this file implements, each with the named units of its implementation:
/// `class Orders extends Effect.Service<Orders>()("Orders", { effect: … })` (also a
/// `Context.Service`/`ServiceMap.Service` class) and `Layer.effect(Orders, …)` /
/// `Layer.scoped` / `Layer.succeed` / `Layer.sync`. An implementation given by name (`effect:
/// make`, `Layer.effect(Orders, make)`) is read from that top-level declaration.
pub(super) fn service_defs<'t>(
    source: &[u8],
    root: Node<'t>,
    bindings: &Bindings,
    top_level: &super::TopLevel<'t>,
) -> Vec<ServiceDef> {
    let mut defs: Vec<ServiceDef> = Vec::new();
    // Top-level `const make = …` declarations, for implementations given by name.
    let declared = |name: &str| top_level.declarators(name).iter().find_map(|d| d.field("value"));
    // The implementation's named functions; the containers (`effect: Effect.gen(…)`) are not
    // methods, and are walked for what they hold, not as units of their own. `path` is the
    // walk's, at the service.
    let implementation = |node: Node<'t>, path: &[Node<'t>]| -> Vec<Unit> {
        let mut roots = vec![node];
        if node.kind_str() == "identifier" {
            let name = text(source, node);
            if let Some(value) = declared(name) {
                roots = vec![value];
            }
        } else if node.kind_str() == "object" {
            // `{ effect: make, dependencies: [...] }`
            let mut inner = node.walk();
            for pair in node.named_children(&mut inner) {
                let key = pair.field("key").map(|k| text(source, k));
                if matches!(key, Some("effect" | "scoped" | "succeed" | "sync")) {
                    if let Some(value) = pair.field("value") {
                        let name = text(source, value);
                        if let Some(declared_value) = declared(name) {
                            roots.push(declared_value);
                        }
                    }
                }
            }
        }
        roots
            .into_iter()
            .flat_map(|root| named_units_with(source, Lineage::rooted(path, root), bindings, false, true))
            .filter(|unit| !matches!(unit.name.as_deref(), Some("effect" | "scoped" | "succeed" | "sync")))
            .collect()
    };
    let mut lineage = Lineage::root(root);
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        match node.kind_str() {
            "class_declaration" | "class" => {
                let heritage = node
                    .named_children(&mut node.walk())
                    .find(|c| c.kind_str() == "class_heritage");
                let name = node.field("name").map(|n| text(source, n));
                if let Some((heritage, name)) = heritage.zip(name) {
                    if text(source, heritage).contains(".Service<") {
                        defs.push(ServiceDef {
                            name: name.to_string(),
                            units: service_options(heritage)
                                .map(|options| implementation(options, lineage.path()))
                                .unwrap_or_default(),
                        });
                    }
                }
            }
            "call_expression" => {
                let callee = node.field("function").map(|c| text(source, c));
                if matches!(
                    callee,
                    Some("Layer.effect" | "Layer.scoped" | "Layer.succeed" | "Layer.sync")
                ) {
                    let mut args = node.field("arguments").into_iter().flat_map(|a| {
                        let mut inner = a.walk();
                        a.named_children(&mut inner).collect::<Vec<_>>()
                    });
                    if let (Some(tag), Some(body)) = (args.next(), args.next()) {
                        if tag.kind_str() == "identifier" {
                            defs.push(ServiceDef {
                                name: text(source, tag).to_string(),
                                units: implementation(body, lineage.path()),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
        if defs.len() >= MAX_SERVICE_DEFS {
            break;
        }
        // Services are defined at the top level: function bodies and class bodies hold none
        // (and are most of a file's nodes).
        let enter = !matches!(
            node.kind_str(),
            "comment" | "string" | "template_string" | "statement_block" | "class_body"
        );
        if enter && lineage.first_child(&mut cursor) {
            continue;
        }
        if !lineage.step_past(&mut cursor, root) {
            break 'walk;
        }
    }
    defs
}

/// The options object of `Effect.Service<X>()("X", { … })`: the last object argument of the
/// call the class extends.
fn service_options(heritage: Node) -> Option<Node> {
    let mut cursor = heritage.walk();
    let extends = heritage
        .named_children(&mut cursor)
        .find(|c| c.kind_str() == "extends_clause")?;
    let call = extends.field("value").filter(|v| v.kind_str() == "call_expression")?;
    let arguments = call.field("arguments")?;
    let mut inner = arguments.walk();
    let options = arguments
        .named_children(&mut inner)
        .filter(|a| a.kind_str() == "object")
        .last();
    options
}
