use crate::extract::extract_file;
use crate::facts::rs2::{EffectClass, Place, Setting};
use crate::facts::FileFacts;
use crate::source::{Language, Span};

fn json(text: &str) -> FileFacts {
    extract_file(Language::Json, text.as_bytes())
}

fn yaml(text: &str) -> FileFacts {
    extract_file(Language::Yaml, text.as_bytes())
}

/// 1-based (line, column) of a span's start.
fn at(facts: &FileFacts, span: Span) -> (usize, usize) {
    facts.position(span.start)
}

#[test]
fn a_json_policy_is_read_with_the_exact_place_of_its_key() {
    let facts = json(concat!(
        "{\n",
        "  \"tenant\": \"acme\",\n",
        "  \"retry\": { \"enabled\": true, \"maxAttempts\": 4, \"baseDelayMs\": 250, \"maxDelayMs\": 5000,\n",
        "             \"backoffMultiplier\": 2, \"jitter\": \"full\",\n",
        "             \"retryStatuses\": [408, 429, 500],\n",
        "             \"retryOnNetworkError\": true, \"respectRetryAfter\": true }\n",
        "}\n",
    ));
    let rs2 = &facts.rs2;
    assert!(rs2.tenant_key && !rs2.mount_key);
    let [policy] = rs2.policies.as_slice() else {
        panic!("{rs2:#?}")
    };
    assert_eq!(policy.place, Place::TopLevel);
    assert_eq!(policy.path, "retry");
    assert_eq!(at(&facts, policy.retry), (3, 3));
    assert_eq!(policy.enabled.known(), Some(&true));
    assert_eq!(policy.max_attempts.known(), Some(&4.0));
    assert_eq!(policy.base_delay_ms.known(), Some(&250.0));
    assert_eq!(policy.max_delay_ms.known(), Some(&5000.0));
    assert_eq!(policy.backoff_multiplier.known(), Some(&2.0));
    assert_eq!(policy.jitter.known().map(String::as_str), Some("full"));
    let statuses = policy.retry_statuses.known().unwrap();
    assert_eq!(
        statuses.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [408.0, 429.0, 500.0]
    );
    assert_eq!(at(&facts, statuses[2].1), (5, 42));
    assert_eq!(policy.retry_on_network_error.known(), Some(&true));
    assert_eq!(policy.respect_retry_after.known(), Some(&true));
    assert!(facts.notes.is_empty());
}

#[test]
fn a_yaml_policy_follows_anchors_and_merge_keys() {
    let facts = yaml(concat!(
        "mount: /orders\n",
        "defaults: &backoff\n",
        "  baseDelayMs: 100\n",
        "  maxDelayMs: 2000\n",
        "retry:\n",
        "  <<: *backoff\n",
        "  maxAttempts: 3\n",
        "  maxDelayMs: 1000\n",
        "  jitter: 'none'\n",
        "  retryStatuses: [429, 0x1F4]\n",
    ));
    let rs2 = &facts.rs2;
    assert!(rs2.mount_key);
    let [policy] = rs2.policies.as_slice() else {
        panic!("{rs2:#?}")
    };
    assert_eq!(at(&facts, policy.retry), (5, 1));
    assert_eq!(policy.base_delay_ms.known(), Some(&100.0), "merged from the anchor");
    assert_eq!(
        policy.max_delay_ms.known(),
        Some(&1000.0),
        "a key written here wins over the merge"
    );
    assert_eq!(policy.max_attempts.known(), Some(&3.0));
    assert_eq!(policy.jitter.known().map(String::as_str), Some("none"));
    let statuses: Vec<f64> = policy.retry_statuses.known().unwrap().iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [429.0, 500.0]);
    assert_eq!(policy.enabled, Setting::Absent);
}

#[test]
fn calls_with_their_own_policy_in_or_beside_the_call_object() {
    let facts = yaml(concat!(
        "steps:\n",
        "  - call:\n",
        "      method: POST\n",
        "      url: /orders\n",
        "    retry: { maxAttempts: 2 }\n",
        "  - call: { method: get, effect: keyed, retry: { enabled: false } }\n",
        "  - call: { url: /x }\n",
    ));
    let rs2 = &facts.rs2;
    assert_eq!(rs2.calls.len(), 3);
    assert_eq!(rs2.policies.len(), 2);
    let (first, second, third) = (&rs2.calls[0], &rs2.calls[1], &rs2.calls[2]);
    assert_eq!(first.class(), Some(EffectClass::Unsafe));
    assert_eq!(at(&facts, first.class_span()), (3, 7), "on the method line");
    assert_eq!(first.policy, Some(0));
    assert_eq!(rs2.policies[0].place, Place::Call(0));
    assert_eq!(rs2.policies[0].path, "steps[0].retry");
    assert_eq!(
        second.class(),
        Some(EffectClass::Keyed),
        "`effect` wins over the method"
    );
    assert_eq!(at(&facts, second.class_span()), (6, 26), "on the effect");
    assert_eq!(second.policy, Some(1));
    assert_eq!(rs2.policies[1].enabled.known(), Some(&false));
    assert_eq!(third.class(), None, "no method, no effect: unknown");
    assert_eq!(third.policy, None);
}

#[test]
fn json_calls_and_imperative_retries() {
    let facts = json(concat!(
        "{ \"steps\": [\n",
        "  { \"call\": { \"method\": \"PATCH\", \"url\": \"/a\" } },\n",
        "  { \"set\": { \"$_retry\": 3 } },\n",
        "  { \"expr\": \"$x := $_retry + 1; $_retryCount\" }\n",
        "] }\n",
    ));
    let rs2 = &facts.rs2;
    assert_eq!(rs2.calls.len(), 1);
    assert_eq!(at(&facts, rs2.calls[0].class_span()), (2, 15));
    let places: Vec<_> = rs2.imperative.iter().map(|s| at(&facts, *s)).collect();
    assert_eq!(places, [(3, 15), (4, 20)], "`$_retryCount` is another name");
    assert!(rs2.policies.is_empty());
}

#[test]
fn look_alikes_are_not_policies() {
    let traps = [
        // package.json: `retry` is a dependency.
        (Language::Json, "{ \"dependencies\": { \"retry\": \"^0.13.1\" } }\n"),
        // tsconfig.json with comments.
        (
            Language::Json,
            "// the base config\n{\n  /* strict */ \"compilerOptions\": { \"strict\": true }\n}\n",
        ),
        // A UI string table: strings where RS2 has numbers and booleans.
        (
            Language::Json,
            "{ \"retry\": { \"button\": \"Retry\", \"maxAttempts\": \"Too many attempts\", \"enabled\": \"On\" } }\n",
        ),
        // Traefik's retry middleware.
        (
            Language::Yaml,
            "http:\n  middlewares:\n    retry-orders:\n      retry:\n        attempts: 4\n        initialInterval: 100ms\n",
        ),
        // A Kubernetes object, even with RS2-looking keys.
        (
            Language::Yaml,
            "apiVersion: v1\nkind: ConfigMap\nretry:\n  maxAttempts: 3\n",
        ),
        // Several documents.
        (
            Language::Yaml,
            "retry:\n  maxAttempts: 3\n---\nretry:\n  maxAttempts: 4\n  value: $_retry\n",
        ),
        // Spring Boot: nested, and only `enabled` is an RS2 key.
        (
            Language::Yaml,
            "spring:\n  rabbitmq:\n    listener:\n      simple:\n        retry:\n          enabled: true\n          max-attempts: 3\n",
        ),
        // An empty policy object.
        (Language::Json, "{ \"retry\": {} }\n"),
        // An unknown jitter mode alone.
        (Language::Yaml, "labels:\n  retry:\n    jitter: Jitter\n"),
    ];
    for (language, text) in traps {
        let facts = extract_file(language, text.as_bytes());
        assert!(
            facts.rs2.policies.is_empty() && facts.rs2.imperative.is_empty(),
            "{text}\n{:#?}",
            facts.rs2
        );
        assert!(facts.notes.is_empty(), "{text}: {:?}", facts.notes);
    }
}

#[test]
fn only_enabled_is_enough_at_a_level_but_not_nested() {
    let top = yaml("retry:\n  enabled: false\n");
    assert_eq!(top.rs2.policies.len(), 1);
    let call = json("{ \"call\": { \"method\": \"GET\" }, \"retry\": { \"enabled\": false } }");
    assert_eq!(call.rs2.policies.len(), 1);
    let nested = yaml("defaults:\n  retry:\n    enabled: true\n");
    assert!(nested.rs2.policies.is_empty());
    let nested = yaml("defaults:\n  retry:\n    enabled: true\n    maxAttempts: 3\n");
    assert_eq!(nested.rs2.policies[0].place, Place::Nested);
    assert_eq!(nested.rs2.policies[0].path, "defaults.retry");
}

#[test]
fn unreadable_values_are_unknown_not_absent() {
    let facts = json("{ \"retry\": { \"maxAttempts\": \"${ATTEMPTS}\", \"baseDelayMs\": 100 } }");
    let policy = &facts.rs2.policies[0];
    assert!(matches!(policy.max_attempts, Setting::Unknown(_)));
    assert_eq!(policy.max_delay_ms, Setting::Absent);
}

#[test]
fn a_parse_error_is_said_only_where_retry_is_mentioned() {
    let broken = json("{ \"retry\": { \"maxAttempts\": 3,, } }\n");
    assert_eq!(broken.notes.len(), 1, "{:?}", broken.notes);
    assert!(broken.notes[0].message.starts_with("not analysed: parse error at 1:"));
    let other = json("{ \"name\": \"x\",, }\n");
    assert!(other.notes.is_empty());
}

#[test]
fn nesting_past_the_depth_followed_is_a_note_not_a_stack_overflow() {
    // 10,000 nested arrays under `retry` in 20 KB; flow collections in YAML the same.
    let deep = |open: &str, close: &str, n: usize| format!("{}{}", open.repeat(n), close.repeat(n));
    let facts = json(&format!(
        "{{\"retry\": {{\"maxAttempts\": 3, \"x\": {}}}}}\n",
        deep("[", "]", 10_000)
    ));
    let [policy] = facts.rs2.policies.as_slice() else {
        panic!("{:#?}", facts.rs2)
    };
    assert_eq!(
        policy.max_attempts.known(),
        Some(&3.0),
        "the policy beside it is still read"
    );
    let [note] = facts.notes.as_slice() else {
        panic!("{:?}", facts.notes)
    };
    assert_eq!(
        note.message,
        "not analysed: the value at 1:97 nests deeper than retrylint follows (64 levels)"
    );
    for text in [
        format!("retry:\n  maxAttempts: 3\n  x: {}\n", deep("[", "]", 5_000)),
        format!(
            "retry:\n  maxAttempts: 3\n  x: {}1{}\n",
            "{a: ".repeat(5_000),
            "}".repeat(5_000)
        ),
    ] {
        let facts = yaml(&text);
        assert_eq!(facts.rs2.policies.len(), 1, "{:#?}", facts.rs2);
        assert!(
            facts
                .notes
                .iter()
                .any(|n| n.message.contains("nests deeper than retrylint follows")),
            "{:?}",
            facts.notes
        );
    }
    // Unclosed, the document is not parsed (tree-sitter's error recovery costs seconds a
    // hundred kilobytes there): said, not silently passed over.
    let facts = yaml(&format!("retry:\n  maxAttempts: 3\n  x: {}\n", "[a: ".repeat(5_000)));
    assert!(
        facts.notes.iter().any(|n| n
            .message
            .starts_with("skipped: brackets nest more than 256 deep and do not match")),
        "{:?}",
        facts.notes
    );
    // 60 levels are followed, policy and all.
    let within = format!(
        "{}{{\"retry\": {{\"maxAttempts\": 2}}}}{}",
        "[".repeat(60),
        "]".repeat(60)
    );
    let facts = json(&within);
    assert_eq!(facts.rs2.policies.len(), 1);
    assert!(facts.notes.is_empty(), "{:?}", facts.notes);
}

#[test]
fn yaml_indented_deeper_than_its_parser_holds_is_skipped_with_a_note() {
    // tree-sitter-yaml aborts the process at 254 open levels: such a file is never parsed.
    let mut text = String::from("retry:\n");
    for i in 1..=260 {
        text.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
    }
    text.push_str(&format!("{}maxAttempts: 3\n", "  ".repeat(261)));
    for text in [text, format!("retry: {}x\n", "- ".repeat(300))] {
        let facts = yaml(&text);
        assert!(facts.rs2.is_empty());
        let [note] = facts.notes.as_slice() else {
            panic!("{:?}", facts.notes)
        };
        assert_eq!(
            note.message,
            "skipped: YAML indented deeper than its parser can read (about 100 levels)"
        );
        assert_eq!(crate::extract::parse_error_count(Language::Yaml, text.as_bytes()), None);
    }
}

#[test]
fn an_alias_bomb_is_bounded_and_said() {
    // Each anchor aliases the one before ten times: 10¹² nodes from under a kilobyte.
    let mut text = String::from("retry: {maxAttempts: 3}\na0: &a0 [{retry: {maxAttempts: 1}}, x]\n");
    for i in 1..12 {
        text.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    let facts = yaml(&text);
    assert!(facts.rs2.policies.len() < 100_000, "{}", facts.rs2.policies.len());
    assert_eq!(
        facts.rs2.top_level().map(|i| facts.rs2.policies[i].path.as_str()),
        Some("retry")
    );
    assert!(
        facts
            .notes
            .iter()
            .any(|n| n.message
                == "not analysed: YAML aliases from 7:10 on copy more than retrylint follows (100000 nodes)"),
        "{:?}",
        facts.notes
    );
    // A chain of aliases each one level deeper stops at the depth followed.
    let mut chain = String::from("retry: {maxAttempts: 3}\nb0: &b0 [1]\n");
    for i in 1..3000 {
        chain.push_str(&format!("b{i}: &b{i} [*b{}]\n", i - 1));
    }
    let facts = yaml(&chain);
    assert_eq!(facts.rs2.policies.len(), 1);
    assert!(
        facts
            .notes
            .iter()
            .any(|n| n.message.contains("nests deeper than retrylint follows")),
        "{:?}",
        facts.notes
    );
}

#[test]
fn merge_keys_take_the_first_mapping_and_long_keys_are_cut_in_paths() {
    let facts = yaml(concat!(
        "a: &a { maxAttempts: 1 }\n",
        "b: &b { maxAttempts: 2, baseDelayMs: 5 }\n",
        "retry:\n",
        "  <<: [*a, *b]\n",
    ));
    let policy = &facts.rs2.policies[0];
    assert_eq!(policy.max_attempts.known(), Some(&1.0), "the first merged mapping wins");
    assert_eq!(policy.base_delay_ms.known(), Some(&5.0));
    let key = "k".repeat(10_000);
    let facts = json(&format!(
        "{{\"{key}\": {{\"{key}\": {{\"retry\": {{\"maxAttempts\": 1}}}}}}}}"
    ));
    let short = format!("{}…", "k".repeat(40));
    assert_eq!(facts.rs2.policies[0].path, format!("{short}.{short}.retry"));
}
