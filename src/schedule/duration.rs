//! Durations as Effect writes them (`"100 millis"`) and as messages print them (`1.4 s`).
//! Milliseconds throughout.

/// Milliseconds in one `unit` of Effect's duration vocabulary.
pub fn unit_millis(unit: &str) -> Option<f64> {
    Some(match unit {
        "nanos" | "nano" => 1e-6,
        "micros" | "micro" => 1e-3,
        "millis" | "milli" => 1.0,
        "seconds" | "second" => 1_000.0,
        "minutes" | "minute" => 60_000.0,
        "hours" | "hour" => 3_600_000.0,
        "days" | "day" => 86_400_000.0,
        "weeks" | "week" => 604_800_000.0,
        _ => return None,
    })
}

/// Effect's duration strings: `<number> <unit>`, e.g. `"100 millis"`, `"1.5 seconds"`.
pub fn parse(text: &str) -> Option<f64> {
    let mut parts = text.split_whitespace();
    let (number, unit) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    Some(value * unit_millis(unit)?)
}

/// A number without a trailing `.0`: `3`, `1.5`.
pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// `1.4 s`, `350 ms`, `27 min`, `3.5 h`, `12 days`: rounded the way a person says a wait,
/// to two or three significant figures, in the largest unit that keeps the number readable;
/// a year or more is "more than a year" (an uncapped exponential reaches 10^34 minutes).
pub fn format_ms(ms: f64) -> String {
    const MINUTE: f64 = 60_000.0;
    const HOUR: f64 = 60.0 * MINUTE;
    const DAY: f64 = 24.0 * HOUR;
    const YEAR: f64 = 365.0 * DAY;
    // One decimal below ten of the unit, none above.
    let round = |n: f64| if n < 10.0 { (n * 10.0).round() / 10.0 } else { n.round() };
    if ms.is_nan() {
        "?".into()
    } else if ms == f64::INFINITY {
        "forever".into()
    } else if ms >= YEAR {
        "more than a year".into()
    } else if ms < 1000.0 {
        let n = if ms < 10.0 {
            (ms * 100.0).round() / 100.0
        } else {
            ms.round()
        };
        format!("{} ms", format_number(n))
    } else if ms < 2.0 * MINUTE {
        let seconds = ms / 1000.0;
        let n = if seconds < 10.0 {
            (seconds * 100.0).round() / 100.0
        } else {
            (seconds * 10.0).round() / 10.0
        };
        format!("{} s", format_number(n))
    } else if ms < 2.0 * HOUR {
        format!("{} min", format_number(round(ms / MINUTE)))
    } else if ms < 2.0 * DAY {
        format!("{} h", format_number(round(ms / HOUR)))
    } else {
        format!("{} days", format_number((ms / DAY).round()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse("100 millis"), Some(100.0));
        assert_eq!(parse("1.5 seconds"), Some(1500.0));
        assert_eq!(parse("1 minute"), Some(60_000.0));
        assert_eq!(parse("100 milis"), None);
        assert_eq!(parse("100millis"), None);
        assert_eq!(parse("-1 seconds"), None);
        assert_eq!(format_ms(1400.0), "1.4 s");
        assert_eq!(format_ms(350.0), "350 ms");
        assert_eq!(format_ms(37_200.0), "37.2 s");
        assert_eq!(format_ms(1_680.0), "1.68 s");
        assert_eq!(format_ms(0.5), "0.5 ms");
        assert_eq!(format_ms(1_000_000.0), "17 min");
        assert_eq!(format_ms(150_000.0), "2.5 min");
        assert_eq!(format_ms(3.5 * 3_600_000.0), "3.5 h");
        assert_eq!(format_ms(12.4 * 86_400_000.0), "12 days");
        // 2^60 × 100 ms: an uncapped exponential's sixtieth gap.
        assert_eq!(format_ms(100.0 * 2f64.powi(60)), "more than a year");
        assert_eq!(format_ms(f64::INFINITY), "forever");
        assert_eq!(format_ms(364.0 * 86_400_000.0), "364 days");
    }
}
