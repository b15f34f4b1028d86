//! Parents without `Node::parent`.
//!
//! tree-sitter keeps no parent links: `Node::parent` descends from the root, looking through
//! the children of every node on the way, so one step up costs the node's depth times the
//! width of the levels above it. A parent walk per site is then quadratic on a deeply nested
//! file (each level pays for the levels above it) and on a large flat one (each top-level
//! statement pays for the statements before it). A walk keeps its path instead — the nodes
//! from the root down to the one it is at — and asks it for parents.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use tree_sitter::Node;

/// The path of a walk, root first, and the parents of the nodes below and around it.
///
/// A walk of a subtree (a unit, a service's implementation) keeps its own path below the
/// path of the walk it was started from (`outer`, which starts at the tree's root), so
/// neither is copied.
pub(crate) struct Lineage<'a, 't> {
    /// The path of the walk this one was started from: the tree's root first.
    outer: &'a [Node<'t>],
    /// This walk's path, the current node last: each node the parent of the next.
    path: Vec<Node<'t>>,
    /// Where `path` hangs from: its first node is the child of `outer[hang - 1]`, or the
    /// tree's root when `hang` is 0; `None` when the walk does not know.
    hang: Option<usize>,
    /// The chain last read down from a node of the paths to a node off them (asked for its
    /// parent, then for that one's, …): each node the parent of the next.
    side: RefCell<Vec<Node<'t>>>,
    children: Children<'t>,
}

/// Whether `outer` spans `inner`.
fn contains(outer: Node, inner: Node) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// The deepest node of `chain` (each node the parent of the next) that spans `node`.
fn deepest_containing(chain: &[Node], node: Node) -> Option<usize> {
    // A parent spans its child: the nodes that span `node` are a prefix of the chain.
    chain.partition_point(|n| contains(*n, node)).checked_sub(1)
}

/// Where `node` is in `chain`, if it is there.
fn position(chain: &[Node], node: Node) -> Option<usize> {
    let deepest = deepest_containing(chain, node)?;
    // A chain of nodes with the same span (`expression_statement` → `call_expression`)
    // holds `node` at or above the deepest one that spans it.
    let range = node.byte_range();
    (0..=deepest)
        .rev()
        .take_while(|&at| at == deepest || chain[at].byte_range() == range)
        .find(|&at| chain[at] == node)
}

/// Nodes with more children than this have them read once into a list, searched by
/// bisection: `child_with_descendant` looks through the children one by one, and the root of
/// a large file, or a function of thousands of statements, has thousands.
const WIDE: u32 = 16;

/// The children of the wide nodes a reading down has passed through, kept.
#[derive(Default)]
pub(crate) struct Children<'t> {
    wide: RefCell<HashMap<usize, Rc<[Node<'t>]>>>,
}

impl<'t> Children<'t> {
    /// The child of `parent` that holds `node` (or is it), as `child_with_descendant`
    /// answers: the same node, found in a wide one by bisection.
    fn holding(&self, parent: Node<'t>, node: Node<'t>) -> Option<Node<'t>> {
        let count = parent.child_count();
        if count <= WIDE || node.start_byte() == node.end_byte() {
            super::work::step(1 + count as u64);
            return parent.child_with_descendant(node);
        }
        // (`children` yields the visible children, hidden ones read through, as
        // `child_with_descendant` answers.)
        let children = {
            let mut wide = self.wide.borrow_mut();
            Rc::clone(wide.entry(parent.id()).or_insert_with(|| {
                super::work::step(count as u64);
                let mut cursor = parent.walk();
                parent.children(&mut cursor).collect()
            }))
        };
        super::work::step(1 + children.len().ilog2() as u64);
        // Siblings do not overlap, and `node` is not empty: the one child that starts at or
        // before it and ends at or after it.
        let at = children.partition_point(|c| c.start_byte() <= node.start_byte());
        let candidate = at.checked_sub(1).map(|at| children[at]);
        match candidate {
            Some(child) if child == node => Some(child),
            Some(child) if contains(child, node) && child.start_byte() < child.end_byte() => Some(child),
            _ => parent.child_with_descendant(node),
        }
    }
}

/// The chain from `start` down to `node`'s parent, read as `Node::parent` reads down from
/// the root; `None` when `node` is not below `start` after all (an empty node between two
/// others).
fn read_down<'t>(children: &Children<'t>, start: Node<'t>, node: Node<'t>) -> Option<Vec<Node<'t>>> {
    let mut chain = vec![start];
    loop {
        let last = *chain.last()?;
        match children.holding(last, node) {
            Some(child) if child == node => return Some(chain),
            Some(child) if child != last => chain.push(child),
            _ => return None,
        }
    }
}

/// `Node::parent`'s own reading, with the chain it reads: down from the root to the last node
/// that holds `node`.
fn read_down_from_root<'t>(children: &Children<'t>, root: Node<'t>, node: Node<'t>) -> Vec<Node<'t>> {
    let mut chain = vec![root];
    loop {
        let last = chain[chain.len() - 1];
        match children.holding(last, node) {
            Some(child) if child != node && child != last => chain.push(child),
            _ => return chain,
        }
    }
}

/// Parents for a walk that keeps no path (a recursive one, or look-ups from anywhere in the
/// tree): each asked node's chain is read down from the root once, with the wide nodes'
/// children kept, and every node on it keeps its parent.
pub(crate) struct Parents<'t> {
    root: Node<'t>,
    known: RefCell<HashMap<usize, Node<'t>>>,
    children: Children<'t>,
}

impl<'t> Parents<'t> {
    pub fn new(root: Node<'t>) -> Self {
        Parents {
            root,
            known: RefCell::new(HashMap::new()),
            children: Children::default(),
        }
    }

    /// The parent of `node`, as `Node::parent` answers.
    pub fn of(&self, node: Node<'t>) -> Option<Node<'t>> {
        super::work::step(1);
        if node == self.root {
            return None;
        }
        if let Some(parent) = self.known.borrow().get(&node.id()) {
            return Some(*parent);
        }
        let chain = read_down_from_root(&self.children, self.root, node);
        let mut known = self.known.borrow_mut();
        for pair in chain.windows(2) {
            known.insert(pair[1].id(), pair[0]);
        }
        let parent = *chain.last().expect("the chain holds the root");
        known.insert(node.id(), parent);
        Some(parent)
    }

    /// The ancestors of `node`, nearest first.
    pub fn ancestors(&self, node: Node<'t>) -> impl Iterator<Item = Node<'t>> + '_ {
        let mut current = node;
        std::iter::from_fn(move || {
            let parent = self.of(current)?;
            current = parent;
            Some(parent)
        })
    }

    pub fn root(&self) -> Node<'t> {
        self.root
    }
}

impl<'a, 't> Lineage<'a, 't> {
    /// The lineage of a walk from the tree's root.
    pub fn root(root: Node<'t>) -> Self {
        Lineage {
            outer: &[],
            path: vec![root],
            hang: Some(0),
            side: RefCell::new(Vec::new()),
            children: Children::default(),
        }
    }

    /// An empty lineage, for a walk that pushes the tree's root first.
    pub fn new() -> Self {
        Lineage {
            outer: &[],
            path: Vec::new(),
            hang: Some(0),
            side: RefCell::new(Vec::new()),
            children: Children::default(),
        }
    }

    /// The lineage of a walk of the subtree at `root`, started from a walk whose path is
    /// `outer` (`root` lies below one of its nodes, or on it).
    pub fn below(outer: &'a [Node<'t>], root: Node<'t>) -> Self {
        let mut lineage = Lineage {
            outer,
            path: Vec::new(),
            hang: None,
            side: RefCell::new(Vec::new()),
            children: Children::default(),
        };
        lineage.restart(root);
        lineage
    }

    /// The lineage of a walk of the subtree at `root` that passes its path on to walks of its
    /// own (`outer` as for [`Lineage::below`]): its path starts at the tree's root.
    pub fn rooted(outer: &[Node<'t>], root: Node<'t>) -> Self {
        let below = Lineage::below(outer, root);
        let mut path = Vec::new();
        if let Some(hang) = below.hang {
            path.extend_from_slice(&outer[..hang]);
        }
        path.extend(below.path);
        Lineage {
            outer: &[],
            path,
            hang: below.hang.map(|_| 0),
            side: RefCell::new(Vec::new()),
            children: Children::default(),
        }
    }

    /// Starts the walk again at `root`, below the outer path.
    pub fn restart(&mut self, root: Node<'t>) {
        self.path.clear();
        if let Some(at) = position(self.outer, root) {
            self.path.push(root);
            self.hang = Some(at);
            return;
        }
        let chain = deepest_containing(self.outer, root)
            .and_then(|at| read_down(&self.children, self.outer[at], root).map(|chain| (at, chain)));
        match chain {
            Some((at, chain)) => {
                self.path.extend(chain.into_iter().skip(1));
                self.hang = Some(at + 1);
            }
            None => {
                self.path.extend(self.fallback(root));
                self.hang = Some(0);
            }
        }
        self.path.push(root);
    }

    /// The path of the walk, root first: what a walk started here passes on.
    pub fn path(&self) -> &[Node<'t>] {
        &self.path
    }

    pub fn push(&mut self, node: Node<'t>) {
        self.path.push(node);
    }

    pub fn pop(&mut self) -> Option<Node<'t>> {
        self.path.pop()
    }

    /// Moves `cursor` to its first child, and the path with it.
    pub fn first_child(&mut self, cursor: &mut tree_sitter::TreeCursor<'t>) -> bool {
        let moved = cursor.goto_first_child();
        if moved {
            self.path.push(cursor.node());
        }
        moved
    }

    /// [`super::step_past`], the path following the cursor.
    pub fn step_past(&mut self, cursor: &mut tree_sitter::TreeCursor<'t>, root: Node<'t>) -> bool {
        loop {
            if cursor.node() == root {
                return false;
            }
            if cursor.goto_next_sibling() {
                self.replace_top(cursor.node());
                return true;
            }
            if !cursor.goto_parent() {
                return false;
            }
            self.path.pop();
        }
    }

    /// The walk moved on to the next sibling of the node it was at.
    pub fn replace_top(&mut self, node: Node<'t>) {
        if let Some(top) = self.path.last_mut() {
            *top = node;
        }
    }

    /// The node the walk is at.
    pub fn top(&self) -> Option<Node<'t>> {
        self.path.last().copied()
    }

    /// The `n`th node up from the one the walk is at (0: that node).
    pub fn up(&self, n: usize) -> Option<Node<'t>> {
        let own = self.path.len();
        if n < own {
            return Some(self.path[own - 1 - n]);
        }
        let hang = self.hang?;
        hang.checked_sub(n - own + 1).map(|at| self.outer[at])
    }

    /// The tree's root, when the walk knows it.
    pub fn root_node(&self) -> Option<Node<'t>> {
        match self.hang {
            Some(0) => self.path.first().copied(),
            Some(_) => self.outer.first().copied(),
            None => None,
        }
    }

    /// The parent of `node`: read off the paths when it is on them or close below them
    /// (the common case: the node the walk is at, or a node a few levels under it).
    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        super::work::step(1);
        match (position(&self.path, node), self.hang) {
            (Some(at), _) if at > 0 => return Some(self.path[at - 1]),
            // The first node of the path hangs from the outer path (or is the root).
            (Some(_), Some(hang)) => return hang.checked_sub(1).map(|at| self.outer[at]),
            _ => {}
        }
        if let Some(at) = position(self.outer, node) {
            return at.checked_sub(1).map(|at| self.outer[at]);
        }
        {
            let side = self.side.borrow();
            if let Some(at) = position(&side, node).filter(|at| *at > 0) {
                return Some(side[at - 1]);
            }
        }
        let chain = self.chain_to(node);
        let parent = chain.last().copied();
        let mut side = self.side.borrow_mut();
        *side = chain;
        side.push(node);
        parent
    }

    /// The ancestors of `node`, nearest first.
    pub fn ancestors(&self, node: Node<'t>) -> impl Iterator<Item = Node<'t>> + '_ {
        let mut current = node;
        std::iter::from_fn(move || {
            let parent = self.parent(current)?;
            current = parent;
            Some(parent)
        })
    }

    /// The chain from the deepest known node that spans `node` down to `node`'s parent
    /// (empty for the root). Read down with `child_with_descendant`, as `Node::parent` reads
    /// down from the root; a node the paths do not lead to is asked of tree-sitter.
    fn chain_to(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let start = {
            let side = self.side.borrow();
            [&self.path[..], self.outer, &side[..]]
                .into_iter()
                .filter_map(|chain| deepest_containing(chain, node).map(|at| chain[at]))
                .filter(|n| *n != node)
                .min_by_key(|n| n.end_byte() - n.start_byte())
        };
        start
            .and_then(|start| read_down(&self.children, start, node))
            .unwrap_or_else(|| self.fallback(node))
    }

    /// The chain from the root down to `node`'s parent, read from the root as tree-sitter
    /// reads it.
    fn fallback(&self, node: Node<'t>) -> Vec<Node<'t>> {
        match self.root_node() {
            Some(root) if root == node => Vec::new(),
            Some(root) => read_down_from_root(&self.children, root, node),
            None => {
                // A walk that does not know the root: tree-sitter's own answer, level by level.
                let mut chain: Vec<Node<'t>> = Vec::new();
                #[allow(clippy::disallowed_methods)] // the one place that asks tree-sitter
                let mut current = node.parent();
                while let Some(n) = current {
                    super::work::step(1 + n.child_count() as u64);
                    chain.push(n);
                    #[allow(clippy::disallowed_methods)]
                    let up = n.parent();
                    current = up;
                }
                chain.reverse();
                chain
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Language;

    /// Every node of `tree` with its parent, as tree-sitter answers.
    fn all_nodes(root: Node) -> Vec<Node> {
        let mut out = Vec::new();
        let mut cursor = root.walk();
        'walk: loop {
            out.push(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        out
    }

    #[test]
    fn parents_read_off_a_walk_are_tree_sitters() {
        let text = "const a = f(g(x), { k: [1, 2] }); function b() { if (c) { return d.e(f) } }\n;;";
        let tree = crate::extract::parse(Language::TypeScript, text.as_bytes()).unwrap();
        let root = tree.root_node();
        let nodes = all_nodes(root);
        // From the root's lineage, from the lineage of a walk at each node, and below it.
        for at in &nodes {
            let mut lineage = Lineage::root(root);
            let mut chain: Vec<Node> = Vec::new();
            #[allow(clippy::disallowed_methods)]
            {
                let mut up = Some(*at);
                while let Some(n) = up {
                    chain.push(n);
                    up = n.parent();
                }
            }
            chain.reverse();
            for n in chain.iter().skip(1) {
                lineage.push(*n);
            }
            for node in &nodes {
                #[allow(clippy::disallowed_methods)]
                let expected = node.parent();
                assert_eq!(lineage.parent(*node), expected, "{node:?} from {at:?}");
            }
            let below = Lineage::below(lineage.path(), *at);
            for node in &nodes {
                #[allow(clippy::disallowed_methods)]
                let expected = node.parent();
                assert_eq!(below.parent(*node), expected, "{node:?} below {at:?}");
            }
        }
    }

    #[test]
    fn nodes_up_the_path() {
        let text = "f(g(x))";
        let tree = crate::extract::parse(Language::TypeScript, text.as_bytes()).unwrap();
        let root = tree.root_node();
        let nodes = all_nodes(root);
        let x = *nodes
            .iter()
            .find(|n| n.kind() == "identifier" && n.start_byte() == 4)
            .unwrap();
        let mut lineage = Lineage::root(root);
        for n in nodes
            .iter()
            .skip(1)
            .filter(|n| contains(**n, x) && n.byte_range() != (0..7) || **n == x)
        {
            lineage.push(*n);
        }
        let arguments = lineage.up(1).unwrap();
        assert_eq!(arguments.kind(), "arguments");
        let below = Lineage::below(lineage.path(), arguments);
        assert_eq!(below.up(0), Some(arguments));
        assert_eq!(below.up(1).map(|n| n.kind()), Some("call_expression"));
        assert_eq!(below.up(100), None);
    }
}
