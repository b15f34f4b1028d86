//! tokio-retry2's main API, as a service calls it: `Retry::spawn`, `RetryIf::spawn` (with its
//! notify argument), `Retry::spawn_notify`, the strategies with `.take(n)`, `MaxInterval` and
//! the jitter functions, and the action's `RetryError::permanent`/`transient`/`retry_after`
//! classification (`MapErr` for the blanket forms). Type-checked by tests/rust_check.rs.
#![allow(dead_code)]

use std::time::Duration;

use tokio_retry2::strategy::{
    jitter, jitter_range, jitter_with_bounds, ExponentialBackoff, ExponentialFactorBackoff, FibonacciBackoff,
    FixedInterval, LinearBackoff, MaxInterval,
};
use tokio_retry2::{MapErr, Retry, RetryError, RetryIf};

#[derive(Debug, PartialEq)]
pub enum Error {
    Contention,
    ConnectionLost,
    NotFound,
    RateLimited(Duration),
}

/// The action classifies its own failures: a permanent error ends the retry at once.
async fn fetch(attempt: u32) -> Result<u64, RetryError<Error>> {
    match attempt {
        0 => Err(RetryError::transient(Error::ConnectionLost)),
        1 => Err(RetryError::retry_after(
            Error::RateLimited(Duration::from_millis(5)),
            Duration::from_millis(5),
        )),
        2 => RetryError::to_transient(Error::Contention),
        3 => Err(RetryError::permanent(Error::NotFound)),
        _ => Ok(u64::from(attempt)),
    }
}

/// An operation with a plain error, made retryable wholesale.
async fn load() -> Result<u64, RetryError<Error>> {
    plain().await.map_transient_err()
}

async fn plain() -> Result<u64, Error> {
    Ok(7)
}

pub fn is_contention(error: &Error) -> bool {
    matches!(error, Error::Contention)
}

/// `from_millis(b)` waits b^n ms, as tokio-retry's does; capped, jittered, three retries.
pub fn contention_strategy() -> impl Iterator<Item = Duration> {
    ExponentialBackoff::from_millis(2)
        .factor(25)
        .max_delay(Duration::from_millis(200))
        .map(jitter)
        .take(3)
}

pub async fn every_shape() -> Result<(), Error> {
    let mut attempt = 0;
    Retry::spawn(contention_strategy(), || {
        attempt += 1;
        fetch(attempt)
    })
    .await?;

    RetryIf::spawn(
        FixedInterval::from_millis(10).map(jitter_range(0..2)).take(3),
        load,
        is_contention,
        |error: &Error, next: Duration| eprintln!("retrying {error:?} in {next:?}"),
    )
    .await?;

    let notify = |error: &Error, next: Duration| eprintln!("retrying {error:?} in {next:?}");
    Retry::spawn_notify(
        ExponentialFactorBackoff::from_millis(10, 2.0)
            .max_delay_millis(100)
            .max_interval(1_000)
            .map(jitter_with_bounds(0.5, 1.5))
            .take(4),
        load,
        notify,
    )
    .await?;

    Retry::spawn(
        FibonacciBackoff::from_millis(10)
            .max_delay(Duration::from_secs(1))
            .take(5),
        load,
    )
    .await?;
    Retry::spawn(
        LinearBackoff::from_millis(100)
            .increment_millis(50)
            .max_delay_millis(400)
            .max_duration(Duration::from_secs(2)),
        load,
    )
    .await?;
    Ok(())
}
