//! The real-repository benchmark's smoke mode (bench/realworld/run.py --smoke): the checked-in
//! sample, modelled on idioms of the measured repositories, is run end to end — retrylint's
//! JSON parsed, findings matched against the sample's ground truth, the tables printed. The
//! full measurement needs the repositories' snapshots and is not run here.

mod common;

#[test]
fn the_realworld_benchmark_runs_on_its_sample() {
    let output = std::process::Command::new("python3")
        .arg(common::repo_root().join("bench/realworld/run.py"))
        .args(["--smoke", "--bin", env!("CARGO_BIN_EXE_retrylint")])
        .env("RETRYLINT_NO_CACHE", "1")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("smoke: ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
