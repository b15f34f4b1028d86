//! Under whom a retry runs (decision 3): the durable retriers that redeliver failed work —
//! outbox subscribers, queue consumers, job runners, workflow activities — recognised from
//! the code without configuration, and the configured registrations and paths.

use crate::facts::{ContainerKind, FileFacts, Handler, OpKind, RetrySite};
use crate::index::{FileId, Index};
use crate::source::Span;

/// A durable retrier a retry site runs under.
#[derive(Debug, Clone)]
pub struct Durable {
    /// Why, in the user's words: "a handler registered with `Outbox.subscribe`".
    pub why: String,
    /// How often the retrier redelivers, when its configuration says (wrangler `max_retries`).
    pub redeliveries: Option<u64>,
    /// When the retry is not inside the handler but in a function the handler calls: that
    /// function's name and the handler.
    pub caller: Option<(String, Span)>,
}

/// How deep a handler's calls to the file's functions are followed.
const MAX_CALL_DEPTH: usize = 3;

/// Why code at a retry site runs under a durable retrier, if it does. `module` holds what
/// the file as a whole says (see `durable_module`), for its sites to share.
pub fn durable_retrier(
    index: &Index,
    file: FileId,
    site: &RetrySite,
    module: &std::cell::OnceCell<Option<String>>,
) -> Option<Durable> {
    let facts = index.facts(file)?;
    let redeliveries = || index.wrangler_max_retries(file);
    let direct = |why: String| {
        Some(Durable {
            why,
            redeliveries: redeliveries(),
            caller: None,
        })
    };
    let vocabulary = &index.config_of(file).vocabulary;
    let registration = site.containers.iter().rev().find(|c| {
        c.kind == ContainerKind::Registration
            && c.name
                .rsplit('.')
                .next()
                .is_some_and(|m| vocabulary.durable_registrations.iter().any(|r| r == m))
    });
    if let Some(registration) = registration {
        return direct(format!("a handler registered with `{}`", registration.name));
    }
    if site
        .containers
        .iter()
        .any(|c| c.kind == ContainerKind::Function && c.name == "queue")
    {
        return direct("a Workers `queue` handler".into());
    }
    // A handler the code hands to a durable retrier, around the retry.
    let around = facts.handlers.iter().find_map(|handler| {
        let span = handler.unit.span;
        (span.start <= site.span.start && site.span.end <= span.end)
            .then(|| durable_handler(facts, handler, vocabulary))
            .flatten()
    });
    if let Some(why) = around {
        return direct(why);
    }
    // The same for every site of the file: read once (`module`).
    if let Some(why) = module.get_or_init(|| durable_module(facts)).clone() {
        return direct(why);
    }
    if index.is_durable_path(file) && (index.config_of(file).durable_paths_configured || corroborated(facts, site)) {
        return direct(format!("{} (a subscriber or consumer)", index.path(file).display()));
    }
    // A function holding the retry, called from a durable handler of the same file.
    let function = site
        .containers
        .iter()
        .rev()
        .find(|c| matches!(c.kind, ContainerKind::Variable | ContainerKind::Function))?;
    facts.handlers.iter().find_map(|handler| {
        let why = durable_handler(facts, handler, vocabulary)?;
        calls(facts, &handler.unit.ops, &function.name, 0).then(|| Durable {
            why,
            redeliveries: redeliveries(),
            caller: Some((function.name.clone(), handler.unit.span)),
        })
    })
}

/// Whether `ops` call the file's function `name`, directly or through other functions of
/// the file.
fn calls(facts: &FileFacts, ops: &[crate::facts::UnitOp], name: &str, depth: usize) -> bool {
    ops.iter().any(|op| {
        let OpKind::Call {
            receiver: None, method, ..
        } = &op.kind
        else {
            return false;
        };
        method == name
            || depth < MAX_CALL_DEPTH
                && facts
                    .unit_named(method)
                    .is_some_and(|callee| calls(facts, &callee.ops, name, depth + 1))
    })
}

/// Whether the file imports from a package whose name is `package` or starts with it
/// followed by `/`.
fn imports(facts: &FileFacts, package: &str) -> bool {
    facts
        .imports
        .iter()
        .any(|i| i.source == package || i.source.strip_prefix(package).is_some_and(|rest| rest.starts_with('/')))
}

/// Whether the local `name` is imported from `package` (or a subpath of it).
fn imported_from(facts: &FileFacts, name: &str, packages: &[&str]) -> bool {
    facts.import(name).is_some_and(|i| {
        packages.iter().any(|package| {
            i.source == *package || i.source.strip_prefix(package).is_some_and(|rest| rest.starts_with('/'))
        })
    })
}

/// Why a durable retrier runs `handler`, if one does.
pub fn durable_handler(facts: &FileFacts, handler: &Handler, vocabulary: &crate::config::Vocabulary) -> Option<String> {
    let registration = handler.registration.as_str();
    let last = registration.rsplit('.').next().unwrap_or(registration);
    let first = registration.split(['.', '<', ' ']).next().unwrap_or(registration);
    if vocabulary.durable_registrations.iter().any(|r| r == last) {
        return Some(format!("a handler registered with `{registration}`"));
    }
    if facts.language == crate::source::Language::Rust {
        // The extractor names what it recognised from the crates' types and calls.
        let why = match registration {
            "SqsEvent" => {
                "an AWS Lambda SQS handler (`SqsEvent`), whose queue redelivers a failed message until its `maxReceiveCount`"
            }
            "apalis" => "an apalis job handler, whose backend runs a failed job again up to its attempts",
            "lapin" => "a lapin (RabbitMQ) consumer, whose queue redelivers a message nacked or never acked",
            "rdkafka" => {
                "an rdkafka consumer loop that commits a message's offset only after handling it, so a failed message is read again"
            }
            "jetstream" => {
                "a NATS JetStream consumer that acks a message only after handling it, so JetStream redelivers a failed one"
            }
            _ => return None,
        };
        return Some(why.to_string());
    }
    let why = match registration {
        "queue" => "a Workers `queue` handler",
        "new Worker" if imported_from(facts, "Worker", &["bullmq", "bullmq-pro"]) => {
            "a BullMQ `Worker` processor, which retries a failed job up to its `attempts`"
        }
        _ if last == "work" && registration.contains('.') && imports(facts, "pg-boss") => {
            "a pg-boss `work` handler, which retries a failed job up to its `retryLimit`"
        }
        _ if matches!(first, "Task" | "TaskList") && imported_from(facts, first, &["graphile-worker"]) => {
            "a graphile-worker task, which retries a failed job up to 25 attempts by default"
        }
        _ if registration.starts_with("SQS")
            || registration.starts_with("Handler<SQS")
            || registration.contains("<SQSEvent") =>
        {
            let name = if registration.starts_with("Handler<") {
                "Handler"
            } else {
                first
            };
            if !imported_from(facts, name, &["aws-lambda", "@types/aws-lambda"]) {
                return None;
            }
            "an AWS Lambda SQS handler, whose queue redelivers a failed message until its `maxReceiveCount`"
        }
        _ if last == "createFunction" && imports(facts, "inngest") => {
            "an Inngest function, which Inngest retries 4 times by default"
        }
        _ if registration == "step.run" && imports(facts, "inngest") => {
            "an Inngest step, which Inngest retries 4 times by default"
        }
        "task" | "schemaTask" if imported_from(facts, registration, &["@trigger.dev/sdk"]) => {
            "a trigger.dev task, which trigger.dev retries as its `retry` options say"
        }
        _ if last == "make"
            && registration.split('.').rev().nth(1) == Some("Activity")
            && imported_from(facts, first, &["@effect/workflow", "effect/unstable/workflow"]) =>
        {
            "an `@effect/workflow` activity, which the workflow engine runs again"
        }
        _ => return None,
    };
    Some(why.to_string())
}

/// A module whose code a durable retrier runs as a whole: Temporal activities, an outbox
/// relay that keeps the attempt count in the row.
fn durable_module(facts: &FileFacts) -> Option<String> {
    if imports(facts, "@temporalio/activity") {
        return Some("a Temporal activity, which Temporal retries without limit by default".into());
    }
    relay(facts).then(|| "an outbox relay that counts attempts in the row and redelivers".to_string())
}

/// Attempt counts kept in a row: `SET attempts = attempts + 1` (or `attempt_count`,
/// `retry_count`, `delivery_count`).
fn relay(facts: &FileFacts) -> bool {
    let is_count = |column: &str| {
        let c = column.to_ascii_lowercase().replace('_', "");
        matches!(
            c.as_str(),
            "attempts" | "attemptcount" | "retrycount" | "retries" | "deliveryattempts" | "deliverycount"
        )
    };
    facts.sql.iter().flat_map(|s| s.statements()).any(|statement| {
        statement
            .assignments
            .iter()
            .any(|a| is_count(&a.column) && a.value_text.replace(' ', "").ends_with("+1"))
    })
}

/// Code corroborating a default durable path: the site sits in a handler-shaped function
/// (`handle`, `onOrderPlaced`, `processMessage`, `InvoiceSubscriber`) or a registration.
fn corroborated(facts: &FileFacts, site: &RetrySite) -> bool {
    let handler_name = |name: &str| {
        name.split('.').any(|part| {
            let lower = part.to_ascii_lowercase();
            lower == "handle"
                || lower == "handler"
                || part
                    .strip_prefix("on")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
                || lower.starts_with("process")
                || lower.starts_with("consume")
                || ["subscriber", "consumer", "handler"].iter().any(|s| lower.ends_with(s))
        })
    };
    site.containers
        .iter()
        .any(|c| c.kind == ContainerKind::Registration || handler_name(&c.name))
        || !facts.handlers.is_empty() && facts.handlers.iter().any(|h| handler_name(&h.registration))
}
