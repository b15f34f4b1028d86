use std::time::Duration;

use backon::{ConstantBuilder, Retryable};

pub struct Error;

async fn write_bucket() -> Result<(), Error> {
    Ok(())
}

// Idiom: a let-bound constant builder, no `.when(…)`.
pub async fn flush() -> Result<(), Error> {
    let backoff = ConstantBuilder::default()
        .with_delay(Duration::from_millis(100))
        .with_max_times(5);
    write_bucket.retry(backoff).await
}
