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

/// `1.4 s`, `350 ms`, `2 min`.
pub fn format_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "∞".into()
    } else if ms < 1000.0 {
        format!("{} ms", format_number((ms * 100.0).round() / 100.0))
    } else if ms < 120_000.0 {
        format!("{} s", format_number((ms / 10.0).round() / 100.0))
    } else {
        format!("{} min", format_number((ms / 600.0).round() / 100.0))
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
    }
}
