//! Durable retriers of Rust services (issue 16.3): code a queue or job runner runs again when
//! it fails, so an in-process retry inside multiplies attempts. Recognised from the types and
//! calls of the libraries, through `use` declarations:
//!
//! - an AWS Lambda SQS handler: a function or closure taking an `SqsEvent`
//!   (`aws_lambda_events`), usually as `LambdaEvent<SqsEvent>`;
//! - an apalis job handler: a function or closure given to `build_fn(…)` in a file using
//!   apalis, or a function taking one of apalis's handler arguments (`Data<T>`, `Attempt`,
//!   `TaskId`, `Worker<…>`);
//! - a lapin (RabbitMQ) consumer: a function or closure taking a `Delivery`/`DeliveryResult`,
//!   the closure given to `set_delegate(…)`, and a `while let … = consumer.next()` loop that
//!   acks what it receives;
//! - an rdkafka consumer loop (`loop { match consumer.recv().await { … } }`, `while let … =
//!   stream.next()`) that commits a message's offset (`commit_message`, `store_offset…`) after
//!   handling it, and a NATS JetStream pull consumer (`async_nats`) whose loop acks after
//!   handling: a message whose handling fails is not committed or acked, so it comes back.
//!   Only what runs before the last commit or ack is under that retrier.

use super::*;
use crate::facts::Handler;

/// What each registration string means is `analysis::durable`'s: these are the names it reads.
const SQS: &str = "SqsEvent";
const APALIS: &str = "apalis";
const LAPIN: &str = "lapin";
const RDKAFKA: &str = "rdkafka";
const JETSTREAM: &str = "jetstream";

/// How each consumer library's loop says a message is done with.
const LAPIN_ACKS: &[&str] = &[".ack(", ".nack(", ".reject("];
const RDKAFKA_COMMITS: &[&str] = &[
    ".commit_message(",
    ".commit_consumer_state(",
    ".store_offset(",
    ".store_offset_from_message(",
];
const JETSTREAM_ACKS: &[&str] = &[".ack(", ".double_ack(", ".ack_with("];

/// apalis's handler arguments (apalis 0.6/0.7 `apalis_core`).
const APALIS_ARGUMENTS: &[&str] = &["Data", "Attempt", "TaskId", "Worker", "WorkerId"];

impl<'t> Rx<'t> {
    pub(super) fn handlers(&self, root: Node<'t>) -> Vec<Handler> {
        let uses_crate = |krate: &str| {
            self.uses
                .values()
                .any(|p| p.first().is_some_and(|c| c.starts_with(krate)))
                || self
                    .globs
                    .iter()
                    .any(|g| g.first().is_some_and(|c| c.starts_with(krate)))
        };
        let apalis = uses_crate("apalis");
        let lapin = uses_crate("lapin");
        let consumers = Consumers {
            lapin,
            rdkafka: uses_crate("rdkafka"),
            jetstream: uses_crate("async_nats"),
        };
        let mut out = Vec::new();
        let mut cursor = root.walk();
        'walk: loop {
            let node = cursor.node();
            let mut descend = !is_test_item(node, self.text);
            if descend {
                match node.kind_str() {
                    "function_item" | "closure_expression" => {
                        if let Some(registration) = self.typed_handler(node) {
                            let body = node.field("body").unwrap_or(node);
                            let name = node.field("name").map(|n| self.text_of(n).to_string());
                            out.push(Handler {
                                registration: registration.to_string(),
                                unit: self.unit(body, name),
                            });
                            // A handler inside a handler adds nothing.
                            descend = false;
                        }
                    }
                    "call_expression" => {
                        if let Some(handler) = self.registered_handler(node, apalis, lapin) {
                            out.push(handler);
                        }
                    }
                    "while_expression" | "loop_expression" if consumers.any() => {
                        if let Some(handler) = self.consumer_loop(node, consumers) {
                            out.push(handler);
                        }
                    }
                    _ => {}
                }
            }
            if descend && cursor.goto_first_child() {
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

    /// A function or closure whose parameter types say who runs it.
    fn typed_handler(&self, node: Node<'t>) -> Option<&'static str> {
        let parameters = node.field("parameters")?;
        let mut found = None;
        let mut cursor = parameters.walk();
        'walk: loop {
            let current = cursor.node();
            if matches!(current.kind_str(), "type_identifier" | "scoped_type_identifier") {
                let path = self.expand(self.segments(current));
                let (Some(first), Some(last)) = (path.first(), path.last()) else {
                    break;
                };
                found = match (first.as_str(), last.as_str()) {
                    ("aws_lambda_events", "SqsEvent") => Some(SQS),
                    (krate, name) if krate.starts_with("apalis") && APALIS_ARGUMENTS.contains(&name) => Some(APALIS),
                    ("lapin", "Delivery" | "DeliveryResult") => Some(LAPIN),
                    _ => None,
                };
                if found.is_some() {
                    break;
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == parameters {
                    break 'walk;
                }
            }
        }
        found
    }

    /// `WorkerBuilder::new(…)….build_fn(handler)` (apalis) and
    /// `consumer.set_delegate(handler)` (lapin): the handler, a closure or a function of the file.
    fn registered_handler(&self, call: Node<'t>, apalis: bool, lapin: bool) -> Option<Handler> {
        let function = call.field("function")?;
        if function.kind_str() != "field_expression" {
            return None;
        }
        let method = self.text_of(function.field("field")?);
        let registration = match method {
            "build_fn" if apalis => APALIS,
            "set_delegate" if lapin => LAPIN,
            _ => return None,
        };
        let argument = *self.args(call).first()?;
        let unit = match argument.kind_str() {
            "closure_expression" => self.unit(argument.field("body").unwrap_or(argument), None),
            "identifier" => {
                let item = self.item(&[], self.text_of(argument))?;
                self.unit(item.body?, Some(item.name.clone()))
            }
            _ => return None,
        };
        Some(Handler {
            registration: registration.to_string(),
            unit,
        })
    }

    /// `while let Some(delivery) = consumer.next().await { … delivery.ack(…) … }` (lapin, and
    /// JetStream's `messages.next()`), `loop { match consumer.recv().await { … } }` or `while
    /// let … = consumer.recv()` committing offsets (rdkafka). The handler is the loop's body up
    /// to its last ack or commit: a retry after it runs once the message is done with.
    fn consumer_loop(&self, node: Node<'t>, consumers: Consumers) -> Option<Handler> {
        let body = node.field("body")?;
        let text = self.text_of(body);
        let receives = match node.kind_str() {
            "while_expression" => {
                let condition = node.field("condition")?;
                if condition.kind_str() != "let_condition" {
                    return None;
                }
                let value = self.text_of(condition.field("value")?);
                value.contains(".next()") || value.contains(".recv()")
            }
            // A bare `loop` receives in its body.
            _ => text.contains(".recv().await"),
        };
        if !receives {
            return None;
        }
        let last = |calls: &[&str]| calls.iter().filter_map(|c| text.rfind(c)).max();
        let (registration, done) = [
            (consumers.lapin, LAPIN, LAPIN_ACKS),
            (consumers.rdkafka, RDKAFKA, RDKAFKA_COMMITS),
            (consumers.jetstream, JETSTREAM, JETSTREAM_ACKS),
        ]
        .into_iter()
        .filter(|(used, _, _)| *used)
        .find_map(|(_, registration, calls)| last(calls).map(|at| (registration, at)))?;
        let mut unit = self.unit(body, None);
        unit.span.end = body.start_byte() as u32 + done as u32;
        Some(Handler {
            registration: registration.to_string(),
            unit,
        })
    }
}

/// Which consumer libraries the file uses.
#[derive(Debug, Clone, Copy)]
struct Consumers {
    lapin: bool,
    rdkafka: bool,
    jetstream: bool,
}

impl Consumers {
    fn any(self) -> bool {
        self.lapin || self.rdkafka || self.jetstream
    }
}
