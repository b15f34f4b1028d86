//! The rest of the service the rule docs' snippets are cut from: its error, its retry module,
//! its repositories and the operations the snippets retry. Stubs only; a snippet's own items
//! shadow them.

use std::fmt;

use aws_lambda_events::event::sqs::SqsMessage;

/// The service's error, classified the way the retry policy needs it.
#[derive(Debug)]
pub enum Error {
    Contention,
    ConnectionLost,
    Timeout,
    Upstream(String),
}

impl Error {
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Contention | Error::ConnectionLost)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Error {}

impl From<sqlx::Error> for Error {
    fn from(_: sqlx::Error) -> Error {
        Error::ConnectionLost
    }
}

impl From<reqwest::Error> for Error {
    fn from(error: reqwest::Error) -> Error {
        Error::Upstream(error.to_string())
    }
}

impl From<reqwest_middleware::Error> for Error {
    fn from(error: reqwest_middleware::Error) -> Error {
        Error::Upstream(error.to_string())
    }
}

impl From<lapin::Error> for Error {
    fn from(_: lapin::Error) -> Error {
        Error::ConnectionLost
    }
}

/// The service's error module.
pub mod error {
    pub use super::Error;
}

/// What the retry module's predicates ask of an error, for the errors the snippets' units
/// return (the service's own, sqlx's, reqwest's).
pub trait Classify {
    fn is_contention(&self) -> bool;
    fn is_connection_lost(&self) -> bool;
}

impl Classify for Error {
    fn is_contention(&self) -> bool {
        matches!(self, Error::Contention)
    }
    fn is_connection_lost(&self) -> bool {
        matches!(self, Error::ConnectionLost)
    }
}

impl Classify for sqlx::Error {
    fn is_contention(&self) -> bool {
        matches!(self, sqlx::Error::Database(db) if db.code().as_deref() == Some("40001"))
    }
    fn is_connection_lost(&self) -> bool {
        matches!(self, sqlx::Error::Io(_))
    }
}

impl Classify for reqwest::Error {
    fn is_contention(&self) -> bool {
        false
    }
    fn is_connection_lost(&self) -> bool {
        self.is_connect()
    }
}

/// The service's retry module.
pub mod retry {
    use std::time::Duration;

    use backon::ExponentialBuilder;
    use reqwest_retry::policies::ExponentialBackoff;
    use tokio_retry::strategy::{jitter, ExponentialBackoff as TokioBackoff};

    use super::{Classify, Error};

    pub fn contention() -> ExponentialBuilder {
        Policies::CONTENTION
    }

    pub fn transient() -> ExponentialBuilder {
        ExponentialBuilder::new()
            .with_min_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_millis(800))
            .with_max_times(3)
            .with_jitter()
    }

    pub struct Policies;

    impl Policies {
        pub const CONTENTION: ExponentialBuilder = ExponentialBuilder::new()
            .with_min_delay(Duration::from_millis(50))
            .with_max_delay(Duration::from_millis(200))
            .with_max_times(3)
            .with_jitter();
    }

    pub fn contention_strategy() -> impl Iterator<Item = Duration> {
        TokioBackoff::from_millis(2)
            .factor(25)
            .max_delay(Duration::from_millis(200))
            .map(jitter)
            .take(3)
    }

    pub fn contention_backoff() -> backoff::ExponentialBackoff {
        backoff::ExponentialBackoff {
            initial_interval: Duration::from_millis(50),
            max_interval: Duration::from_millis(200),
            max_elapsed_time: Some(Duration::from_millis(500)),
            ..Default::default()
        }
    }

    pub fn http() -> ExponentialBackoff {
        ExponentialBackoff::builder().build_with_max_retries(3)
    }

    pub fn is_contention(error: &impl Classify) -> bool {
        error.is_contention()
    }

    pub fn is_connection_lost(error: &impl Classify) -> bool {
        error.is_connection_lost()
    }

    pub fn classify(error: Error) -> backoff::Error<Error> {
        if error.is_contention() {
            backoff::Error::transient(error)
        } else {
            backoff::Error::permanent(error)
        }
    }
}

pub use retry::classify;

/// The orders repository.
pub trait OrderRepository {
    async fn activate(&self, id: i64) -> Result<(), Error>;
}

pub struct PgOrderRepository {
    pub pool: sqlx::PgPool,
}

impl PgOrderRepository {
    pub async fn update(&self, _id: i64) -> Result<(), Error> {
        Ok(())
    }
}

pub struct InvoiceRepo;

impl InvoiceRepo {
    pub async fn update(&self, _invoice: i64) -> Result<(), Error> {
        Ok(())
    }
}

/// Operations of other modules, called by path.
pub mod orders {
    pub async fn activate(_id: i64) -> Result<(), super::Error> {
        Ok(())
    }
}

pub mod fake {
    pub async fn call() -> Result<(), super::Error> {
        Ok(())
    }
}

/// Job payloads and the services their handlers are given.
pub struct Welcome {
    pub user_id: i64,
}

pub struct Mailer;

// The operations the snippets retry.
pub async fn fetch() -> Result<(), Error> {
    Ok(())
}
pub async fn fetch_rate(_currency: &str) -> Result<f64, Error> {
    Ok(1.0)
}
pub async fn fetch_profile(_user_id: i64) -> Result<(), Error> {
    Ok(())
}
pub async fn refresh_totals(_id: i64) -> Result<(), Error> {
    Ok(())
}
pub async fn pull() -> Result<(), Error> {
    Ok(())
}
pub async fn pull_stock() -> Result<(), Error> {
    Ok(())
}
pub async fn pull_prices() -> Result<(), Error> {
    Ok(())
}
pub async fn send_receipt(_order: i64) -> Result<(), Error> {
    Ok(())
}
pub async fn render_invoice(_record: &SqsMessage) -> Result<(), Error> {
    Ok(())
}
pub async fn mark_issued(_record: &SqsMessage) -> Result<(), Error> {
    Ok(())
}
pub async fn reserve(_data: &[u8]) -> Result<(), Error> {
    Ok(())
}

pub async fn write(_entry: i64) -> Result<(), Error> {
    Ok(())
}

/// A consensus node's mailbox, as the cluster snippet proposes to it.
pub struct Mailbox;

impl Mailbox {
    pub async fn send_proposal(&self, _msg: Vec<u8>) -> Result<(), Error> {
        Ok(())
    }
}

/// What the cluster proposes: a session that leaves, by its id.
pub enum Message {
    Leave { id: u64 },
}

impl Message {
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        Ok(Vec::new())
    }
}
