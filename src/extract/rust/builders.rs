//! Builder expressions evaluated to chains: a library constructor with its defaults, or a path
//! naming a policy, plus the builder methods applied to it — through local `let`s and
//! same-file helper functions.

use super::*;

/// The retry libraries whose functions of values are arguments the model reads.
const RETRY_CRATES: &[&str] = &[
    "tokio_retry",
    "tokio_retry2",
    "backon",
    "backoff",
    "reqwest_retry",
    "retry_policies",
    "exponential_backoff",
];

impl<'t> Rx<'t> {
    pub(super) fn path(&self, segments: Vec<String>, module: &[String], node: Node) -> Val {
        Val::Path(
            RustPath {
                segments: self.expand(segments),
                module: module.to_vec(),
                span: span(node),
            },
            collapse(self.text_of(node)),
        )
    }

    /// A value as a builder chain: a chain, or a path naming a policy.
    pub(super) fn chain(&self, val: Val) -> Option<RustChain> {
        match val {
            Val::Chain(chain) => Some(chain),
            Val::Path(path, text) => Some(RustChain {
                span: path.span,
                base: RustBase::Named(path),
                ops: Vec::new(),
                text,
                factory: None,
            }),
            Val::Arg(_) | Val::Unknown => None,
        }
    }

    pub(super) fn arg(&self, val: Val) -> Arg {
        match val {
            Val::Arg(arg) => arg,
            Val::Path(path, _) => Arg::Path(path.segments),
            Val::Chain(_) | Val::Unknown => Arg::Unknown,
        }
    }

    pub(super) fn eval(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        if depth > MAX_DEPTH || node.is_error() || node.is_missing() {
            return Val::Unknown;
        }
        let next = depth + 1;
        match node.kind_str() {
            "parenthesized_expression" => match named_children(node).first() {
                Some(inner) => self.eval(*inner, module, env, next),
                None => Val::Unknown,
            },
            "reference_expression" | "type_cast_expression" => match node.field("value") {
                Some(inner) => self.eval(inner, module, env, next),
                None => Val::Unknown,
            },
            "integer_literal" | "float_literal" => {
                parse_number(self.text_of(node)).map_or(Val::Unknown, |n| Val::Arg(Arg::Num(n)))
            }
            "boolean_literal" => Val::Arg(Arg::Bool(self.text_of(node) == "true")),
            "binary_expression" => self.binary(node, module, env, next),
            // `1..3`, `1..=2` (tokio-retry2's `jitter_range(…)`); a half-open one is unknown.
            "range_expression" => {
                let ends: Vec<Node> = named_children(node);
                let inclusive = (0..node.child_count())
                    .filter_map(|i| node.child(i))
                    .any(|c| c.kind_str() == "..=");
                match ends.as_slice() {
                    [lo, hi] => Val::Arg(Arg::Range {
                        lo: Box::new(self.arg(self.eval(*lo, module, env, next))),
                        hi: Box::new(self.arg(self.eval(*hi, module, env, next))),
                        inclusive,
                    }),
                    _ => Val::Unknown,
                }
            }
            "block" => match tail(node) {
                Some(value) => self.eval(value, module, env, next),
                None => Val::Unknown,
            },
            "identifier" => self.identifier(node, module, env, next),
            "scoped_identifier" => {
                let segments = self.self_type(self.segments(node), node);
                match segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                    [.., "Duration", "ZERO"] => Val::Arg(Arg::Ms(0.0)),
                    [.., "Duration", _] => Val::Unknown,
                    // `u32::MAX` attempts (exponential-backoff's endless `Backoff::new(u32::MAX, …)`).
                    [ty @ ("u8" | "u16" | "u32" | "u64" | "usize"), "MAX"] => Val::Arg(Arg::Num(match *ty {
                        "u8" => f64::from(u8::MAX),
                        "u16" => f64::from(u16::MAX),
                        "u32" => f64::from(u32::MAX),
                        _ => u64::MAX as f64,
                    })),
                    _ => self.path(segments, module, node),
                }
            }
            "call_expression" => self.call(node, module, env, next),
            "struct_expression" => self.struct_literal(node, module, env, next),
            // `self.factor` of a method evaluated for a receiver whose fields are known
            // (`typed_method`); else `self.backoff`: the value the constructor stores in the field.
            "field_expression" => {
                let bound = node
                    .field("value")
                    .filter(|v| v.kind_str() == "self")
                    .and(node.field("field"))
                    .and_then(|field| env?.get(&format!("self.{}", self.text_of(field))).cloned());
                bound.unwrap_or_else(|| self.field_value(node, module, next))
            }
            _ => Val::Unknown,
        }
    }

    pub(super) fn identifier(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        let name = self.text_of(node);
        if name == "None" {
            return Val::Arg(Arg::None);
        }
        match self.local(node, name) {
            Local::Let { value, .. } => {
                let val = self.eval(value, module, env, depth);
                return self.after_statements(val, node, value, module, env, depth);
            }
            Local::Param => {
                return env.and_then(|e| e.get(name)).cloned().unwrap_or(Val::Unknown);
            }
            Local::None => {}
        }
        // A `const` of an enclosing block (a function body's own): a number, as a module's.
        if let Some(value) = self.block_const(node, name) {
            if let Val::Arg(arg) = self.eval(value, module, None, depth) {
                return Val::Arg(arg);
            }
        }
        // A same-file `const`/`static`: a number is used as one, a builder is a named policy.
        if let Some(item) = self.item(module, name) {
            if item.body.is_none() {
                if let Some(value) = item.value {
                    if let Val::Arg(arg) = self.eval(value, &item.module, None, depth) {
                        return Val::Arg(arg);
                    }
                }
            }
        }
        self.path(vec![name.to_string()], module, node)
    }

    pub(super) fn binary(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        let (Some(left), Some(right), Some(op)) = (node.field("left"), node.field("right"), node.field("operator"))
        else {
            return Val::Unknown;
        };
        let left = self.arg(self.eval(left, module, env, depth));
        let right = self.arg(self.eval(right, module, env, depth));
        let value = match (self.text_of(op), left, right) {
            ("+", Arg::Num(a), Arg::Num(b)) => Arg::Num(a + b),
            ("-", Arg::Num(a), Arg::Num(b)) => Arg::Num(a - b),
            ("*", Arg::Num(a), Arg::Num(b)) => Arg::Num(a * b),
            ("/", Arg::Num(a), Arg::Num(b)) if b != 0.0 => Arg::Num(a / b),
            ("+", Arg::Ms(a), Arg::Ms(b)) => Arg::Ms(a + b),
            ("-", Arg::Ms(a), Arg::Ms(b)) => Arg::Ms(a - b),
            ("*", Arg::Ms(a), Arg::Num(b)) | ("*", Arg::Num(b), Arg::Ms(a)) => Arg::Ms(a * b),
            ("/", Arg::Ms(a), Arg::Num(b)) if b != 0.0 => Arg::Ms(a / b),
            _ => return Val::Unknown,
        };
        Val::Arg(value)
    }

    pub(super) fn args(&self, call: Node<'t>) -> Vec<Node<'t>> {
        call.field("arguments").map(named_children).unwrap_or_default()
    }

    pub(super) fn call(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        let Some(function) = node.field("function") else {
            return Val::Unknown;
        };
        let args = self.args(node);
        let eval_args = || -> Vec<Arg> {
            args.iter()
                .map(|a| self.arg(self.eval(*a, module, env, depth)))
                .collect()
        };
        match function.kind_str() {
            "field_expression" => {
                let (Some(receiver), Some(field)) = (function.field("value"), function.field("field")) else {
                    return Val::Unknown;
                };
                let method = self.text_of(field);
                // `self.retry_policy()`: a method of this `impl` without arguments.
                if receiver.kind_str() == "self" && args.is_empty() {
                    let ty = self.impl_type(node);
                    let item = ty.and_then(|ty| self.associated(module, &ty, method));
                    return match item {
                        Some(item) if item.params.is_empty() => self.helper(item, node, None, depth),
                        _ => Val::Unknown,
                    };
                }
                // `RetryConfig::default().to_backoff()`, `self.retries.to_backoff()`: a method
                // taking only `self`, of a type the file names for the receiver.
                if args.is_empty() && receiver.kind_str() != "self" {
                    if let Some(val) = self.typed_method(node, receiver, method, module, depth) {
                        return val;
                    }
                }
                let receiver = self.eval(receiver, module, env, depth);
                if let Val::Arg(arg) = &receiver {
                    // `Duration::from_secs(2).into()`, `n.clone()`.
                    return match method {
                        "into" | "clone" | "to_owned" => Val::Arg(arg.clone()),
                        // A factory's `Duration` parameter in milliseconds and back
                        // (`Duration::from_millis(max_delay.as_millis().try_into().unwrap())`):
                        // converted when a call gives it.
                        "as_millis" | "as_secs" if args.is_empty() && arg.has_param() => {
                            Val::Arg(Arg::Call(vec![method.to_string()], vec![arg.clone()]))
                        }
                        "try_into" | "unwrap" if args.is_empty() && arg.has_param() => Val::Arg(arg.clone()),
                        _ => Val::Unknown,
                    };
                }
                let Some(mut chain) = self.chain(receiver) else {
                    return Val::Unknown;
                };
                chain.ops.push(RustOp {
                    method: method.to_string(),
                    args: eval_args(),
                    span: span(node),
                });
                chain.span = span(node);
                chain.text = collapse(self.text_of(node));
                Val::Chain(chain)
            }
            "identifier" | "scoped_identifier" => {
                let segments = self.self_type(self.segments(function), node);
                let names: Vec<&str> = segments.iter().map(String::as_str).collect();
                if names == ["Some"] {
                    let inner = args
                        .first()
                        .map(|a| self.arg(self.eval(*a, module, env, depth)))
                        .unwrap_or(Arg::Unknown);
                    return Val::Arg(Arg::Some(Box::new(inner)));
                }
                if let [.., "Duration", unit] = names.as_slice() {
                    let values = eval_args();
                    // A factory's parameter: converted when a call gives it.
                    if values.iter().any(Arg::has_param) {
                        return Val::Arg(Arg::Call(vec!["Duration".into(), unit.to_string()], values));
                    }
                    return duration(unit, &values).map_or(Val::Unknown, |ms| Val::Arg(Arg::Ms(ms)));
                }
                let path = self.expand(segments.clone());
                let values = eval_args();
                if let Some((ctor, state)) = model::constructor(&path, &values) {
                    return Val::Chain(RustChain {
                        base: RustBase::New {
                            ctor,
                            state,
                            via: None,
                            configured: false,
                        },
                        ops: Vec::new(),
                        span: span(node),
                        text: collapse(self.text_of(node)),
                        factory: None,
                    });
                }
                // A constructor given values not known here (a factory's parameters): kept
                // with them, so what does not depend on them is still judged.
                if values.iter().any(Arg::not_known) {
                    if let Some((ctor, _)) = model::constructor_with_placeholders(&path, &values) {
                        return Val::Chain(RustChain {
                            base: RustBase::Deferred {
                                path,
                                args: values,
                                ctor,
                            },
                            ops: Vec::new(),
                            span: span(node),
                            text: collapse(self.text_of(node)),
                            factory: None,
                        });
                    }
                }
                // A retry library's function of values (tokio-retry2's `jitter_range(1..3)`,
                // given to `.map(…)`): the model reads it as an argument.
                if path.len() >= 2 && RETRY_CRATES.contains(&path[0].as_str()) && !args.is_empty() {
                    return Val::Arg(Arg::Call(path, values));
                }
                // A same-file helper with parameters is called with its arguments; one without
                // whose value is a number (`fn default_max_retries() -> usize { 5 }`) is it.
                if let Some(item) = self.item_of_path(&path, module) {
                    if !item.has_params && args.is_empty() {
                        if let Some(value) = item.value.filter(|_| item.body.is_some()) {
                            if let Val::Arg(arg) = self.eval(value, item.scope(), None, depth) {
                                return Val::Arg(arg);
                            }
                        }
                    }
                    if item.has_params && item.params.len() == args.len() && item.body.is_some() {
                        let mut bound = HashMap::new();
                        for (param, arg) in item.params.iter().zip(&args) {
                            bound.insert(param.clone(), self.eval(*arg, module, env, depth));
                        }
                        return self.helper(item, node, Some(&bound), depth);
                    }
                }
                if args.is_empty() {
                    // `retry::transient()`: a named policy.
                    self.path(segments, module, function)
                        .with_span(span(node), collapse(self.text_of(node)))
                } else if self.factory_path(&path) {
                    // `retry::backoff(100, 5)`, `jstz_utils::retry::exponential_backoff(…)`: a
                    // factory of another file, evaluated with these arguments by the index.
                    Val::Chain(RustChain {
                        base: RustBase::Call {
                            path: RustPath {
                                segments: path,
                                module: module.to_vec(),
                                span: span(function),
                            },
                            args: values,
                        },
                        ops: Vec::new(),
                        span: span(node),
                        text: collapse(self.text_of(node)),
                        factory: None,
                    })
                } else {
                    Val::Unknown
                }
            }
            _ => Val::Unknown,
        }
    }

    /// Whether a called path can name a factory of another file: into this crate, or through
    /// a `use` of a crate that is not a known library (a workspace crate); a free function
    /// (no type segment).
    fn factory_path(&self, path: &[String]) -> bool {
        let Some(first) = path.first() else { return false };
        if path.len() < 2
            || path[..path.len() - 1]
                .iter()
                .any(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
        {
            return false;
        }
        self.in_crate(path) || (first != "self" && !EXTERN_ROOTS.contains(&first.as_str()))
    }

    /// A same-file function (or method) called at `call`, evaluated with its parameters
    /// bound: the chain it builds, named by the call and remembering the helper.
    fn helper(&self, item: &Item<'t>, call: Node<'t>, bound: Option<&HashMap<String, Val>>, depth: usize) -> Val {
        let Some(value) = item.value else { return Val::Unknown };
        match self.eval(value, item.scope(), bound, depth) {
            Val::Chain(mut chain) => {
                if let RustBase::New { via, .. } = &mut chain.base {
                    via.get_or_insert_with(|| item.name.clone());
                }
                // A free function given arguments: the outermost such call is the factory.
                if !item.associated && !item.params.is_empty() && bound.is_some() {
                    chain.factory = Some(Box::new((item.name.clone(), item.name_span)));
                }
                chain.span = span(call);
                chain.text = collapse(self.text_of(call));
                Val::Chain(chain)
            }
            other => other,
        }
    }

    /// `receiver.method()` where the file says the receiver's type: the method of this file's
    /// `impl Type`, evaluated with the fields the receiver is known to hold (a config struct's
    /// `to_backoff(&self)` builder); or, for a type of another file of the crate, that file's
    /// method as a named policy. `None` when the type is not known (evaluation goes on as for
    /// any builder method).
    fn typed_method(
        &self,
        call: Node<'t>,
        receiver: Node<'t>,
        method: &str,
        module: &[String],
        depth: usize,
    ) -> Option<Val> {
        let (ty, fields) = self.receiver_type(receiver, module, depth)?;
        if let Some(item) = self.associated(module, &ty, method) {
            // Only `self` as parameter: the builder depends on nothing else.
            if !(item.has_params && item.params.is_empty()) {
                return Some(Val::Unknown);
            }
            return Some(match self.helper(item, call, Some(&fields), depth) {
                Val::Chain(mut chain) => {
                    if let RustBase::New { configured, .. } = &mut chain.base {
                        *configured = true;
                    }
                    Val::Chain(chain)
                }
                other => other,
            });
        }
        let path = self.expand(vec![ty, method.to_string()]);
        self.in_crate(&path).then(|| {
            Val::Path(
                RustPath {
                    segments: path,
                    module: module.to_vec(),
                    span: span(call),
                },
                collapse(self.text_of(call)),
            )
        })
    }

    /// The type of a method call's receiver where the file says it, with the fields the
    /// receiver is known to hold (as `self.field` bindings): `Type::default()` (the values of
    /// the file's `impl Default for Type`), another `Type::…(…)` constructor, `self.field`
    /// (the field's declared type), or a local `let` of one of these.
    fn receiver_type(
        &self,
        receiver: Node<'t>,
        module: &[String],
        depth: usize,
    ) -> Option<(String, HashMap<String, Val>)> {
        if depth > MAX_DEPTH {
            return None;
        }
        match receiver.kind_str() {
            "call_expression" => {
                let function = receiver
                    .field("function")
                    .filter(|f| f.kind_str() == "scoped_identifier")?;
                let segments = self.self_type(self.segments(function), receiver);
                let [.., ty, constructor] = segments.as_slice() else {
                    return None;
                };
                if !ty.starts_with(|c: char| c.is_ascii_uppercase()) {
                    return None;
                }
                let fields = if constructor == "default" && self.args(receiver).is_empty() {
                    self.default_fields(ty, module, depth)
                } else {
                    HashMap::new()
                };
                Some((ty.clone(), fields))
            }
            "field_expression" => {
                let (value, field) = (receiver.field("value")?, receiver.field("field")?);
                if value.kind_str() != "self" {
                    return None;
                }
                let owner = self.impl_type(receiver)?;
                Some((self.field_type(&owner, self.text_of(field))?, HashMap::new()))
            }
            "identifier" => match self.local(receiver, self.text_of(receiver)) {
                Local::Let { value, .. } => self.receiver_type(value, module, depth + 1),
                // `fn run(cfg: &Config) { cfg.retry_config() }`: the parameter's declared type.
                Local::Param => Some((self.param_type(receiver, self.text_of(receiver))?, HashMap::new())),
                Local::None => None,
            },
            "reference_expression" | "parenthesized_expression" => {
                let inner = receiver
                    .field("value")
                    .or_else(|| named_children(receiver).first().copied())?;
                self.receiver_type(inner, module, depth + 1)
            }
            _ => None,
        }
    }

    /// The declared type of the parameter `name` of the function around `at`, as written.
    pub(super) fn param_type_node(&self, at: Node<'t>, name: &str) -> Option<Node<'t>> {
        for node in self.parents.ancestors(at) {
            match node.kind_str() {
                "function_item" => {
                    let parameter = named_children(node.field("parameters")?).into_iter().find(|p| {
                        p.kind_str() == "parameter"
                            && p.field("pattern").is_some_and(|pattern| {
                                pattern.kind_str() == "identifier" && self.text_of(pattern) == name
                            })
                    })?;
                    return parameter.field("type");
                }
                "closure_expression" => return None,
                "for_expression"
                    if !node
                        .field("body")
                        .is_some_and(|b| b.byte_range().contains(&at.start_byte())) => {}
                // A pattern between the use and the function binds the name first.
                "for_expression" | "match_arm" | "let_condition" | "if_let_expression" => {
                    let mut names = Vec::new();
                    if let Some(pattern) = node.field("pattern") {
                        self.pattern_names(pattern, &mut names);
                    }
                    if names.iter().any(|n| n == name) {
                        return None;
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Whether `name` is a type parameter of the function or `impl` around `at`.
    pub(super) fn is_type_parameter(&self, at: Node<'t>, name: &str) -> bool {
        self.parents
            .ancestors(at)
            .filter(|n| matches!(n.kind_str(), "function_item" | "impl_item" | "trait_item"))
            .filter_map(|n| n.field("type_parameters"))
            .flat_map(named_children)
            .any(|parameter| {
                let declared = match parameter.kind_str() {
                    "type_identifier" => Some(parameter),
                    _ => parameter
                        .field("name")
                        .or_else(|| parameter.field("left"))
                        .or_else(|| named_children(parameter).first().copied()),
                };
                declared.is_some_and(|d| d.kind_str() == "type_identifier" && self.text_of(d) == name)
            })
    }

    /// The declared type of the parameter `name` of the function around `at` (`cfg: &Config`,
    /// `cfg: Arc<Config>` is not a `Config`): its last path segment.
    fn param_type(&self, at: Node<'t>, name: &str) -> Option<String> {
        for node in self.parents.ancestors(at) {
            match node.kind_str() {
                "function_item" => {
                    let parameter = named_children(node.field("parameters")?).into_iter().find(|p| {
                        p.kind_str() == "parameter"
                            && p.field("pattern").is_some_and(|pattern| {
                                pattern.kind_str() == "identifier" && self.text_of(pattern) == name
                            })
                    })?;
                    let mut ty = parameter.field("type")?;
                    while ty.kind_str() == "reference_type" {
                        ty = ty.field("type")?;
                    }
                    return matches!(ty.kind_str(), "type_identifier" | "scoped_type_identifier")
                        .then(|| self.segments(ty).last().cloned())
                        .flatten();
                }
                // A closure's parameters are not typed where it matters.
                "closure_expression" => return None,
                _ => {}
            }
        }
        None
    }

    /// The file's top-level items and those of its inline `mod`s, read once: the first
    /// `impl Default for T` and `struct T` of each `T`.
    fn file_items(&self) -> &FileItems<'t> {
        self.file_items.get_or_init(|| {
            let mut items = FileItems::default();
            let mut pending = vec![self.parents.root()];
            while let Some(container) = pending.pop() {
                for item in named_children(container) {
                    if item.kind_str() == "mod_item" {
                        pending.extend(item.field("body"));
                    }
                    let last = |field| item.field(field).and_then(|t| self.segments(t).last().cloned());
                    match item.kind_str() {
                        "impl_item" if last("trait").as_deref() == Some("Default") => {
                            if let Some(ty) = last("type") {
                                items.defaults.entry(ty).or_insert(item);
                            }
                        }
                        "struct_item" => {
                            if let Some(name) = item.field("name") {
                                items.structs.entry(self.text_of(name)).or_insert(item);
                            }
                        }
                        _ => {}
                    }
                }
            }
            items
        })
    }

    /// The fields `impl Default for ty { fn default() -> Self { Self { … } } }` of this file
    /// sets, evaluated, as `self.field` bindings.
    pub(super) fn default_fields(&self, ty: &str, module: &[String], depth: usize) -> HashMap<String, Val> {
        let mut fields = HashMap::new();
        let implementation = self.file_items().defaults.get(ty).copied();
        let literal = implementation
            .and_then(|i| i.field("body"))
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .find(|f| f.kind_str() == "function_item" && f.field("name").is_some_and(|n| self.text_of(n) == "default"))
            .and_then(|f| f.field("body"))
            .and_then(tail)
            .filter(|value| value.kind_str() == "struct_expression");
        for init in literal
            .and_then(|l| l.field("body"))
            .map(named_children)
            .unwrap_or_default()
        {
            if init.kind_str() != "field_initializer" {
                continue;
            }
            let (Some(field), Some(value)) = (init.field("field"), init.field("value")) else {
                continue;
            };
            let value = self.eval(value, module, None, depth + 1);
            fields.insert(format!("self.{}", self.text_of(field)), value);
        }
        // `#[serde(default = "default_max_retries")] max_retries: usize`: the function's value,
        // for the fields no `impl Default` sets.
        if let Some(body) = self.file_items().structs.get(ty).and_then(|d| d.field("body")) {
            let mut default_fn: Option<String> = None;
            let mut cursor = body.walk();
            for child in body.named_children(&mut cursor) {
                match child.kind_str() {
                    "attribute_item" => {
                        let text: String = self.text_of(child).chars().filter(|c| !c.is_whitespace()).collect();
                        default_fn = text
                            .strip_prefix("#[serde(")
                            .and_then(|rest| rest.split("default=\"").nth(1))
                            .and_then(|rest| rest.split('"').next())
                            .map(str::to_string);
                    }
                    "field_declaration" => {
                        let (Some(name), Some(function)) = (child.field("name"), default_fn.take()) else {
                            continue;
                        };
                        let key = format!("self.{}", self.text_of(name));
                        if fields.contains_key(&key) {
                            continue;
                        }
                        let segments: Vec<String> = function.split("::").map(str::to_string).collect();
                        let item = self.item_of_path(&self.expand(segments), module);
                        if let Some(value) = item.filter(|i| !i.has_params).and_then(|i| i.value) {
                            fields.insert(key, self.eval(value, module, None, depth + 1));
                        }
                    }
                    _ => default_fn = None,
                }
            }
        }
        fields
    }

    /// The declared type of `field` of this file's `struct owner`: its last path segment.
    pub(super) fn field_type(&self, owner: &str, field: &str) -> Option<String> {
        let declaration = *self.file_items().structs.get(owner)?;
        named_children(declaration.field("body")?)
            .into_iter()
            .filter(|f| f.kind_str() == "field_declaration")
            .find(|f| f.field("name").is_some_and(|n| self.text_of(n) == field))
            .and_then(|f| f.field("type"))
            .and_then(|t| self.segments(t).last().cloned())
    }

    /// `Self::policy` inside `impl Type`: `self::Type::policy`, an associated item of this file.
    fn self_type(&self, segments: Vec<String>, at: Node<'t>) -> Vec<String> {
        if segments.first().is_none_or(|s| s != "Self") {
            return segments;
        }
        let Some(ty) = self.impl_type(at) else { return segments };
        let mut out = vec!["self".to_string(), ty];
        out.extend(segments.into_iter().skip(1));
        out
    }

    /// The file's struct expressions that build `ty` (by its name or as `Self`), in order:
    /// read once for the file, not walked per `self.field`.
    fn struct_expressions(&self, ty: &str) -> Vec<Node<'t>> {
        let index = self.structs.get_or_init(|| {
            let mut index = StructExpressions::default();
            let mut cursor = self.parents.root().walk();
            'walk: loop {
                let current = cursor.node();
                if current.kind_str() == "struct_expression" {
                    if let Some(name) = current.field("name") {
                        if self.text_of(name) == "Self" {
                            index.selfs.push(current);
                        } else if let Some(last) = self.segments(name).last() {
                            index.by_type.entry(last.clone()).or_default().push(current);
                        }
                    }
                }
                // A test-only constructor (`#[cfg(all(test, …))] fn new_test()`, `mod tests`)
                // is not a writer the service runs with: it leaves the field's value alone
                // (issue 25.3).
                if !is_test_only(current, self.text) && cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break 'walk;
                    }
                }
            }
            index
        });
        crate::extract::work::step(1);
        // `Self { … }` builds the type of the `impl` it is in: another type's is not one.
        let mut out: Vec<Node<'t>> = index
            .selfs
            .iter()
            .copied()
            .filter(|s| self.impl_type(*s).is_none_or(|t| t == ty))
            .collect();
        out.extend(index.by_type.get(ty).into_iter().flatten().copied());
        out.sort_by_key(|n| n.start_byte());
        out
    }

    /// `self.field`: the one value the file's constructors store in that field of the `impl`'s
    /// type (`Self { backoff: ExponentialBuilder::default()… }` in `new()`). Several different
    /// values, or none, are unknown.
    fn field_value(&self, node: Node<'t>, module: &[String], depth: usize) -> Val {
        let (Some(receiver), Some(field)) = (node.field("value"), node.field("field")) else {
            return Val::Unknown;
        };
        if receiver.kind_str() != "self" {
            return Val::Unknown;
        }
        let Some(ty) = self.impl_type(node) else {
            return Val::Unknown;
        };
        let field = self.text_of(field);
        let mut values = Vec::new();
        for current in self.struct_expressions(&ty) {
            for init in current.field("body").map(named_children).unwrap_or_default() {
                let value = match init.kind_str() {
                    "field_initializer" if init.field("field").is_some_and(|f| self.text_of(f) == field) => {
                        init.field("value")
                    }
                    "shorthand_field_initializer" => named_children(init)
                        .first()
                        .copied()
                        .filter(|n| self.text_of(*n) == field),
                    _ => None,
                };
                values.extend(value);
            }
            if values.len() > 4 {
                return Val::Unknown;
            }
        }
        let mut found: Option<RustChain> = None;
        for value in values {
            let Some(chain) = self.chain(self.eval(value, module, None, depth)) else {
                return Val::Unknown;
            };
            match &found {
                Some(first) if first.text != chain.text => return Val::Unknown,
                Some(_) => {}
                None => found = Some(chain),
            }
        }
        found.map_or(Val::Unknown, Val::Chain)
    }

    pub(super) fn struct_literal(
        &self,
        node: Node<'t>,
        module: &[String],
        env: Option<&HashMap<String, Val>>,
        depth: usize,
    ) -> Val {
        let Some(name) = node.field("name") else {
            return Val::Unknown;
        };
        let path = self.expand(self.segments(name));
        let Some((ctor, state)) = model::struct_literal(&path) else {
            return Val::Unknown;
        };
        let mut ops = Vec::new();
        if let Some(body) = node.field("body") {
            for field in named_children(body) {
                match field.kind_str() {
                    "field_initializer" => {
                        let (Some(key), Some(value)) = (field.field("field"), field.field("value")) else {
                            return Val::Unknown;
                        };
                        ops.push(RustOp {
                            method: format!("={}", self.text_of(key)),
                            args: vec![self.arg(self.eval(value, module, env, depth))],
                            span: span(field),
                        });
                    }
                    "shorthand_field_initializer" => {
                        let Some(key) = named_children(field).first().copied() else {
                            return Val::Unknown;
                        };
                        ops.push(RustOp {
                            method: format!("={}", self.text_of(key)),
                            args: vec![self.arg(self.eval(key, module, env, depth))],
                            span: span(field),
                        });
                    }
                    // `..Default::default()` / `..ExponentialBackoff::default()`: the defaults.
                    "base_field_initializer" => {
                        let text = self.text_of(field);
                        if !(text.ends_with("Default::default()") || text.ends_with("::default()")) {
                            return Val::Unknown;
                        }
                    }
                    _ => {}
                }
            }
        }
        Val::Chain(RustChain {
            base: RustBase::New {
                ctor,
                state,
                via: None,
                configured: false,
            },
            ops,
            span: span(node),
            text: collapse(self.text_of(node)),
            factory: None,
        })
    }
}

impl Val {
    pub(super) fn with_span(self, at: Span, text: String) -> Val {
        match self {
            Val::Path(mut path, _) => {
                path.span = at;
                Val::Path(path, text)
            }
            other => other,
        }
    }
}

/// An item of test code: behind a test attribute, or the conventional `mod tests`.
fn is_test_only(node: Node, text: &[u8]) -> bool {
    is_test_item(node, text)
        || (node.kind_str() == "mod_item"
            && node
                .field("name")
                .is_some_and(|n| matches!(&text[n.byte_range()], b"tests" | b"test")))
}

/// The value of a block: its tail expression, or a lone `return expr;`.
pub(super) fn tail(block: Node) -> Option<Node> {
    let last = *named_children(block).last()?;
    match last.kind_str() {
        "expression_statement" => {
            let inner = *named_children(last).first()?;
            if inner.kind_str() == "return_expression" {
                named_children(inner).first().copied()
            } else {
                None
            }
        }
        "let_declaration" | "function_item" | "const_item" | "static_item" | "use_declaration" => None,
        _ => Some(last),
    }
}

/// `1_000`, `50u64`, `0.5`, `1.5f32`, `0x10`.
pub(super) fn parse_number(text: &str) -> Option<f64> {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let (digits, radix) = if let Some(hex) = cleaned.strip_prefix("0x") {
        (hex.to_string(), 16)
    } else if let Some(bin) = cleaned.strip_prefix("0b") {
        (bin.to_string(), 2)
    } else if let Some(oct) = cleaned.strip_prefix("0o") {
        (oct.to_string(), 8)
    } else {
        (cleaned, 10)
    };
    let suffixes = [
        "u128", "i128", "usize", "isize", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8", "f64", "f32",
    ];
    let trimmed = suffixes.iter().find_map(|s| digits.strip_suffix(s)).unwrap_or(&digits);
    if radix == 10 {
        trimmed.parse().ok()
    } else {
        u64::from_str_radix(trimmed, radix).ok().map(|n| n as f64)
    }
}

/// `Duration::from_millis(50)` and friends, in milliseconds.
pub(super) fn duration(unit: &str, args: &[Arg]) -> Option<f64> {
    model::duration(unit, args)
}
/// The first `impl Default for T` and `struct T` of each `T` among the file's items (see
/// `Rx::file_items`).
#[derive(Default)]
pub(super) struct FileItems<'t> {
    defaults: HashMap<String, Node<'t>>,
    structs: HashMap<&'t str, Node<'t>>,
}

/// The file's struct expressions: those written `Self { … }`, and the others by the last
/// segment of their type's name (see `Rx::struct_expressions`).
#[derive(Default)]
pub(super) struct StructExpressions<'t> {
    selfs: Vec<Node<'t>>,
    by_type: HashMap<String, Vec<Node<'t>>>,
}
