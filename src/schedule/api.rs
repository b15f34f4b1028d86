//! The `Schedule` API of each `effect` line: which exports exist, where their behaviour
//! differs between lines, and the snippets help texts suggest.
//!
//! Read from the published packages (`Object.keys(await import("effect/Schedule"))` and
//! `dist/Schedule.js`): 3.22.4; the 4.0 betas at every boundary where `Schedule` changed
//! (5, 10, 12, 22, 38, 40, 66, 70, 74, 94, 97, 101, 102, 103, 105, 107); 4.0.0-rc.110, 4.0.0,
//! 4.0.6 and 4.1.0. The differential test (`tests/schedule_oracle.rs`) checks this table
//! against the installed 3.22.4, 4.0.0-beta.66 and 4.1.0 at every run.
//!
//! The betas are not one API. Up to beta.94 they combine with `both`/`either`/`take`/
//! `andThen` and give delay callbacks `(output, delay)`; from beta.97 they have 4.x's
//! `max`/`min`/`upTo` and metadata callbacks; `andThen` became `concat` at beta.105.

use crate::effect_version::EffectVersion;

/// Where an export exists.
struct Export {
    name: &'static str,
    v3: bool,
    /// The first and last 4.0 beta that export it (published betas run from 5 to 107).
    beta: Option<(u32, u32)>,
    /// 4.x releases (4.0.0-rc.110 on).
    v4: bool,
}

const ALL: Option<(u32, u32)> = Some((0, u32::MAX));
/// Betas up to 94: the `both`/`either`/`take` API.
const UNTIL_94: Option<(u32, u32)> = Some((0, 94));
const FROM_97: Option<(u32, u32)> = Some((97, u32::MAX));

const fn export(name: &'static str, v3: bool, beta: Option<(u32, u32)>, v4: bool) -> Export {
    Export { name, v3, beta, v4 }
}

const fn v3_only(name: &'static str) -> Export {
    export(name, true, None, false)
}

const fn everywhere(name: &'static str) -> Export {
    export(name, true, ALL, true)
}

const fn v4_lines(name: &'static str) -> Export {
    export(name, false, ALL, true)
}

const fn beta_until_94(name: &'static str) -> Export {
    export(name, false, UNTIL_94, false)
}

const EXPORTS: &[Export] = &[
    // In every line.
    everywhere("addDelay"),
    everywhere("cron"),
    everywhere("duration"),
    everywhere("exponential"),
    everywhere("fibonacci"),
    everywhere("fixed"),
    everywhere("forever"),
    everywhere("identity"),
    everywhere("isSchedule"),
    everywhere("map"),
    everywhere("modifyDelay"),
    everywhere("passthrough"),
    everywhere("recurs"),
    everywhere("spaced"),
    everywhere("windowed"),
    export("jittered", true, Some((10, u32::MAX)), true),
    export("once", true, None, true),
    export("upTo", true, FROM_97, true),
    export("andThen", true, Some((0, 103)), false),
    export("compose", true, Some((0, 38)), false),
    export("delays", true, UNTIL_94, false),
    export("either", true, UNTIL_94, false),
    export("eitherWith", true, UNTIL_94, false),
    export("elapsed", true, UNTIL_94, false),
    export("reduce", true, UNTIL_94, false),
    export("tapInput", true, UNTIL_94, false),
    export("tapOutput", true, UNTIL_94, false),
    export("unfold", true, UNTIL_94, false),
    // The 4.0 betas and 4.x.
    v4_lines("CurrentMetadata"),
    v4_lines("during"),
    v4_lines("fromStep"),
    v4_lines("fromStepWithMetadata"),
    v4_lines("toStep"),
    v4_lines("toStepWithMetadata"),
    v4_lines("toStepWithSleep"),
    v4_lines("while"),
    export("setInputType", false, Some((22, u32::MAX)), true),
    export("tap", false, Some((74, u32::MAX)), true),
    export("max", false, FROM_97, true),
    export("min", false, FROM_97, true),
    export("concat", false, Some((105, u32::MAX)), true),
    export("concatResult", false, Some((105, u32::MAX)), true),
    export("andThenResult", false, Some((0, 103)), false),
    // The betas up to 94.
    beta_until_94("both"),
    beta_until_94("bothLeft"),
    beta_until_94("bothRight"),
    beta_until_94("bothWith"),
    beta_until_94("collectInputs"),
    beta_until_94("collectOutputs"),
    export("collectWhile", true, UNTIL_94, false),
    beta_until_94("eitherLeft"),
    beta_until_94("eitherRight"),
    beta_until_94("satisfiesErrorType"),
    beta_until_94("satisfiesInputType"),
    beta_until_94("satisfiesOutputType"),
    beta_until_94("satisfiesServicesType"),
    beta_until_94("take"),
    // 3.x only.
    v3_only("CurrentIterationMetadata"),
    v3_only("ScheduleDriverTypeId"),
    v3_only("ScheduleTypeId"),
    v3_only("addDelayEffect"),
    v3_only("andThenEither"),
    v3_only("as"),
    v3_only("asVoid"),
    v3_only("bothInOut"),
    v3_only("check"),
    v3_only("checkEffect"),
    v3_only("collectAllInputs"),
    v3_only("collectAllOutputs"),
    v3_only("collectUntil"),
    v3_only("collectUntilEffect"),
    v3_only("collectWhileEffect"),
    v3_only("count"),
    v3_only("dayOfMonth"),
    v3_only("dayOfWeek"),
    v3_only("delayed"),
    v3_only("delayedEffect"),
    v3_only("delayedSchedule"),
    v3_only("driver"),
    v3_only("ensuring"),
    v3_only("fromDelay"),
    v3_only("fromDelays"),
    v3_only("fromFunction"),
    v3_only("hourOfDay"),
    v3_only("intersect"),
    v3_only("intersectWith"),
    v3_only("jitteredWith"),
    v3_only("linear"),
    v3_only("makeWithState"),
    v3_only("mapBoth"),
    v3_only("mapBothEffect"),
    v3_only("mapEffect"),
    v3_only("mapInput"),
    v3_only("mapInputContext"),
    v3_only("mapInputEffect"),
    v3_only("minuteOfHour"),
    v3_only("modifyDelayEffect"),
    v3_only("onDecision"),
    v3_only("provideContext"),
    v3_only("provideService"),
    v3_only("recurUntil"),
    v3_only("recurUntilEffect"),
    v3_only("recurUntilOption"),
    v3_only("recurUpTo"),
    v3_only("recurWhile"),
    v3_only("recurWhileEffect"),
    v3_only("reduceEffect"),
    v3_only("repeatForever"),
    v3_only("repetitions"),
    v3_only("resetAfter"),
    v3_only("resetWhen"),
    v3_only("run"),
    v3_only("secondOfMinute"),
    v3_only("stop"),
    v3_only("succeed"),
    v3_only("sync"),
    v3_only("union"),
    v3_only("unionWith"),
    v3_only("untilInput"),
    v3_only("untilInputEffect"),
    v3_only("untilOutput"),
    v3_only("untilOutputEffect"),
    v3_only("whileInput"),
    v3_only("whileInputEffect"),
    v3_only("whileOutput"),
    v3_only("whileOutputEffect"),
    v3_only("zipLeft"),
    v3_only("zipRight"),
    v3_only("zipWith"),
];

/// Whether `Schedule.<name>` exists in `version`. With the version unknown every line's
/// names are accepted.
pub fn exists(version: EffectVersion, name: &str) -> bool {
    let Some(export) = EXPORTS.iter().find(|e| e.name == name) else {
        return false;
    };
    match version {
        EffectVersion::Unknown => true,
        EffectVersion::V3 => export.v3,
        EffectVersion::V4Beta(n) => export.beta.is_some_and(|(first, last)| (first..=last).contains(&n)),
        EffectVersion::V4 { .. } => export.v4,
    }
}

/// Every export name of `version` the table knows (for tests and coverage).
pub fn exports(version: EffectVersion) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = EXPORTS
        .iter()
        .filter(|e| exists(version, e.name))
        .map(|e| e.name)
        .collect();
    names.sort_unstable();
    names
}

/// How a version's combinators behave where the lines differ.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    pub version: EffectVersion,
}

impl Api {
    pub fn new(version: EffectVersion) -> Api {
        Api { version }
    }

    pub fn has(self, name: &str) -> bool {
        exists(self.version, name)
    }

    pub fn is_v3(self) -> bool {
        self.version == EffectVersion::V3
    }

    /// Up to beta.94 `modifyDelay` calls `f(output, delay)` and `addDelay` `f(output)`, as
    /// 3.x does (returning an Effect); later lines pass one metadata object.
    pub fn positional_delay_callbacks(self) -> bool {
        matches!(self.version, EffectVersion::V3 | EffectVersion::V4Beta(..=94))
    }

    /// `fibonacci(one)` waits one, one, two, three… in 3.x and from 4.1 on; the 4.0 betas and
    /// 4.0.x releases skip the first term: one, two, three, five….
    pub fn fibonacci_skips_first(self) -> bool {
        matches!(
            self.version,
            EffectVersion::V4Beta(_) | EffectVersion::V4 { minor: Some(0) }
        )
    }

    /// beta.97–102 inverted `during`: it stops at once unless the time is already past.
    pub fn during_is_inverted(self) -> bool {
        matches!(self.version, EffectVersion::V4Beta(97..=102))
    }

    /// beta.5's `andThen` took one extra step, with no delay, when it switched schedules.
    pub fn concat_has_extra_step(self) -> bool {
        matches!(self.version, EffectVersion::V4Beta(..=9))
    }
}

/// A capped, jittered exponential policy written with `version`'s combinators, for help texts.
pub fn cap_snippet(version: EffectVersion) -> &'static str {
    match version {
        EffectVersion::V3 => "`Schedule.exponential(base).pipe(Schedule.union(Schedule.spaced(cap)), Schedule.intersect(Schedule.recurs(retries)), Schedule.jittered)`",
        EffectVersion::V4Beta(..=9) => "`Schedule.exponential(base).pipe(Schedule.either(Schedule.spaced(cap)), Schedule.both(Schedule.recurs(retries)))`",
        EffectVersion::V4Beta(..=94) => "`Schedule.exponential(base).pipe(Schedule.either(Schedule.spaced(cap)), Schedule.both(Schedule.recurs(retries)), Schedule.jittered)`",
        _ => "`Schedule.max([Schedule.min([Schedule.exponential(base), Schedule.spaced(cap)]), Schedule.recurs(retries)]).pipe(Schedule.jittered)`",
    }
}

/// The combinator that jitters a schedule's delays in `version`, if it has one
/// (4.0.0-beta.5 has none).
pub fn jitter_snippet(version: EffectVersion) -> Option<&'static str> {
    exists(version, "jittered").then_some("Schedule.jittered")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Object.keys(await import("effect/Schedule"))` of the published packages.
    const V3_22_4: &str = "CurrentIterationMetadata ScheduleDriverTypeId ScheduleTypeId addDelay addDelayEffect andThen andThenEither as asVoid bothInOut check checkEffect collectAllInputs collectAllOutputs collectUntil collectUntilEffect collectWhile collectWhileEffect compose count cron dayOfMonth dayOfWeek delayed delayedEffect delayedSchedule delays driver duration either eitherWith elapsed ensuring exponential fibonacci fixed forever fromDelay fromDelays fromFunction hourOfDay identity intersect intersectWith isSchedule jittered jitteredWith linear makeWithState map mapBoth mapBothEffect mapEffect mapInput mapInputContext mapInputEffect minuteOfHour modifyDelay modifyDelayEffect onDecision once passthrough provideContext provideService recurUntil recurUntilEffect recurUntilOption recurUpTo recurWhile recurWhileEffect recurs reduce reduceEffect repeatForever repetitions resetAfter resetWhen run secondOfMinute spaced stop succeed sync tapInput tapOutput unfold union unionWith untilInput untilInputEffect untilOutput untilOutputEffect upTo whileInput whileInputEffect whileOutput whileOutputEffect windowed zipLeft zipRight zipWith";
    const BETA_5: &str = "CurrentMetadata addDelay andThen andThenResult both bothLeft bothRight bothWith collectInputs collectOutputs collectWhile compose cron delays duration during either eitherLeft eitherRight eitherWith elapsed exponential fibonacci fixed forever fromStep fromStepWithMetadata identity isSchedule map modifyDelay passthrough recurs reduce satisfiesErrorType satisfiesInputType satisfiesOutputType satisfiesServicesType spaced take tapInput tapOutput toStep toStepWithMetadata toStepWithSleep unfold while windowed";
    const BETA_66: &str = "CurrentMetadata addDelay andThen andThenResult both bothLeft bothRight bothWith collectInputs collectOutputs collectWhile cron delays duration during either eitherLeft eitherRight eitherWith elapsed exponential fibonacci fixed forever fromStep fromStepWithMetadata identity isSchedule jittered map modifyDelay passthrough recurs reduce satisfiesErrorType satisfiesInputType satisfiesOutputType satisfiesServicesType setInputType spaced take tapInput tapOutput toStep toStepWithMetadata toStepWithSleep unfold while windowed";
    const BETA_97: &str = "CurrentMetadata addDelay andThen andThenResult cron duration during exponential fibonacci fixed forever fromStep fromStepWithMetadata identity isSchedule jittered map max min modifyDelay passthrough recurs setInputType spaced tap toStep toStepWithMetadata toStepWithSleep upTo while windowed";
    const BETA_107: &str = "CurrentMetadata addDelay concat concatResult cron duration during exponential fibonacci fixed forever fromStep fromStepWithMetadata identity isSchedule jittered map max min modifyDelay passthrough recurs setInputType spaced tap toStep toStepWithMetadata toStepWithSleep upTo while windowed";
    const V4_1_0: &str = "CurrentMetadata addDelay concat concatResult cron duration during exponential fibonacci fixed forever fromStep fromStepWithMetadata identity isSchedule jittered map max min modifyDelay once passthrough recurs setInputType spaced tap toStep toStepWithMetadata toStepWithSleep upTo while windowed";

    #[test]
    fn the_table_matches_the_published_packages() {
        for (version, published) in [
            (EffectVersion::V3, V3_22_4),
            (EffectVersion::V4Beta(5), BETA_5),
            (EffectVersion::V4Beta(66), BETA_66),
            (EffectVersion::V4Beta(97), BETA_97),
            (EffectVersion::V4Beta(107), BETA_107),
            (EffectVersion::V4 { minor: Some(1) }, V4_1_0),
        ] {
            let mut expected: Vec<&str> = published.split_whitespace().collect();
            expected.sort_unstable();
            assert_eq!(exports(version), expected, "{version:?}");
        }
    }

    #[test]
    fn snippets_use_names_the_version_has() {
        assert!(!cap_snippet(EffectVersion::V3).contains("Schedule.max"));
        assert!(cap_snippet(EffectVersion::V4Beta(66)).contains("Schedule.both"));
        assert!(cap_snippet(EffectVersion::V4 { minor: None }).contains("Schedule.max"));
        for version in [
            EffectVersion::V3,
            EffectVersion::V4Beta(5),
            EffectVersion::V4Beta(66),
            EffectVersion::V4Beta(100),
            EffectVersion::V4 { minor: None },
        ] {
            let snippet = cap_snippet(version);
            for name in snippet.split("Schedule.").skip(1) {
                let name: String = name.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
                assert!(exists(version, &name), "{version:?} has no Schedule.{name}");
            }
        }
        assert_eq!(jitter_snippet(EffectVersion::V4Beta(5)), None);
        assert_eq!(jitter_snippet(EffectVersion::V3), Some("Schedule.jittered"));
    }
}
