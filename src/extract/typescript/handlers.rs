//! Handlers: functions handed to something that runs them later (a queue processor, an
//! outbox subscription, a job task), with what they do.

use super::FieldExt;
use super::Lineage;
use tree_sitter::Node;

use super::services::EnclosingServices;
use super::units::{text, unit, Bindings};

use crate::facts::Handler;

/// Handlers kept per file.
const MAX_HANDLERS: usize = 128;

/// Roots of callees that combine or transform, and never register anything.
const NOT_REGISTRATIONS: &[&str] = &[
    "Effect", "Stream", "Layer", "Schedule", "Option", "Either", "Array", "Chunk", "Promise", "Object", "JSON", "Math",
    "console", "Console", "Match", "Schema", "Data", "Duration", "Ref", "Record", "String", "Number", "Cause", "Exit",
    "Fiber", "Scope", "Metric", "Config", "pipe", "flow",
];
/// Methods that take a callback to run now (iteration, promise chaining, combinators).
const CALLBACK_METHODS: &[&str] = &[
    "map",
    "flatMap",
    "forEach",
    "filter",
    "reduce",
    "then",
    "catch",
    "finally",
    "pipe",
    "tap",
    "andThen",
    "some",
    "every",
    "find",
    "findIndex",
    "sort",
    "mapError",
    "catchAll",
    "catchTag",
    "catchTags",
    "catchCause",
    "orElse",
    "matchEffect",
    "match",
    "zipWith",
    "all",
    "gen",
    "fn",
    "sync",
    "suspend",
    "tryPromise",
    "try",
    "promise",
    "acquireRelease",
    "ensuring",
    "onExit",
    "withSpan",
    "provide",
    "provideService",
    "setTimeout",
    "replace",
];
/// Properties of a registration's options object that hold the handler: `task({ run })`,
/// `Activity.make({ execute })`.
const HANDLER_PROPERTIES: &[&str] = &["run", "execute", "handler", "process", "perform"];

/// Every function of the file handed to something that runs it later, with its operations.
pub fn handlers(source: &[u8], root: Node, bindings: &Bindings) -> Vec<Handler> {
    let mut out: Vec<Handler> = Vec::new();
    let mut lineage = Lineage::root(root);
    let mut blocks = EnclosingServices::default();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        blocks.visit(lineage.path());
        let mut push = |registration: String, node: Node| {
            if out.len() < MAX_HANDLERS && registration.len() <= 80 && !registration.contains('\n') {
                let around = blocks.around(source, node);
                out.push(Handler {
                    registration,
                    unit: unit(source, &[node], None, bindings, lineage.path(), Some(&around)),
                });
            }
        };
        match node.kind_str() {
            "call_expression" | "new_expression" => {
                let callee = node.field("function").or_else(|| node.field("constructor"));
                let arguments = node.field("arguments").filter(|a| a.kind_str() == "arguments");
                if let (Some(callee), Some(arguments)) = (callee, arguments) {
                    let written = text(source, callee);
                    let root_name = written.split(['.', '(']).next().unwrap_or(written);
                    let last = written.rsplit('.').next().unwrap_or(written);
                    let registers = matches!(callee.kind_str(), "identifier" | "member_expression")
                        && !NOT_REGISTRATIONS.contains(&root_name)
                        && !CALLBACK_METHODS.contains(&last);
                    if registers {
                        let registration = if node.kind_str() == "new_expression" {
                            format!("new {written}")
                        } else {
                            written.to_string()
                        };
                        let mut inner = arguments.walk();
                        for argument in arguments.named_children(&mut inner) {
                            if is_handler_value(source, argument) {
                                push(registration.clone(), argument);
                            } else if argument.kind_str() == "object" {
                                let mut props = argument.walk();
                                for pair in argument.named_children(&mut props) {
                                    let key = pair.field("key").map(|k| text(source, k));
                                    let value = pair.field("value");
                                    // `execute: effect.pipe(…)`: an effect is a handler too.
                                    let value = value.filter(|v| {
                                        !matches!(v.kind_str(), "identifier" | "string" | "number" | "true" | "false")
                                    });
                                    if let (Some(key), Some(value)) = (key, value) {
                                        if HANDLER_PROPERTIES.contains(&key) {
                                            push(registration.clone(), value);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // A Workers `queue(batch, env, ctx)` handler, as a method or a property.
            "method_definition" if node.field("name").is_some_and(|n| text(source, n) == "queue") => {
                push("queue".into(), node);
            }
            "pair" if node.field("key").is_some_and(|k| text(source, k) == "queue") => {
                if let Some(value) = node.field("value").filter(|v| is_handler_value(source, *v)) {
                    push("queue".into(), value);
                }
            }
            // `const handler: SQSHandler = async (event) => …`, `const task: Task = …`
            "variable_declarator" => {
                if let (Some(annotation), Some(value)) = (node.field("type"), node.field("value")) {
                    let declared = text(source, annotation).trim_start_matches(':').trim();
                    if is_handler_value(source, value) || value.kind_str() == "object" {
                        push(declared.to_string(), value);
                    }
                }
            }
            _ => {}
        }
        // `async function handler(event: SQSEvent)`: a function typed by its first parameter.
        if matches!(
            node.kind_str(),
            "function_declaration" | "arrow_function" | "function_expression"
        ) {
            let first = node.field("parameters").and_then(|list| {
                let mut params = list.walk();
                let first = list.named_children(&mut params).find(|p| p.kind_str() != "comment");
                first
            });
            if let Some(annotation) = first.and_then(|p| p.field("type")) {
                let declared = text(source, annotation).trim_start_matches(':').trim();
                if declared.starts_with("SQS") {
                    push(declared.to_string(), node);
                }
            }
        }
        if !matches!(node.kind_str(), "comment" | "string" | "template_string") && lineage.first_child(&mut cursor) {
            continue;
        }
        if !lineage.step_past(&mut cursor, root) {
            break;
        }
    }
    out
}

/// A function, or an effect built in place (`Effect.gen(…)`, `Effect.fn(…)(…)`).
fn is_handler_value(source: &[u8], value: Node) -> bool {
    match value.kind_str() {
        "arrow_function" | "function_expression" | "generator_function" | "function" => true,
        "call_expression" => {
            let callee = value.field("function").map(|c| text(source, c)).unwrap_or("");
            callee.starts_with("Effect.fn") || callee.starts_with("Effect.gen") || callee.starts_with("Effect.fn(")
        }
        _ => false,
    }
}

/// Functions, generators and `Effect.fn(…)(…)` / `Effect.gen(…)` values.
pub(super) fn is_unit_value(source: &[u8], value: Node) -> bool {
    match value.kind_str() {
        "arrow_function" | "function_expression" | "generator_function" | "function" => true,
        "call_expression" => {
            let callee = value.field("function");
            callee.is_some_and(|c| {
                let t = text(source, c);
                t.starts_with("Effect.fn") || t.ends_with(".gen") || t == "gen" || c.kind_str() == "call_expression"
            })
        }
        _ => false,
    }
}
