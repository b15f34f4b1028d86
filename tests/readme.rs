//! The README is executed: what it says the tool prints is what it prints, the counts it gives
//! are the counts, and the Neovim snippet a user pastes works in the Neovim CI installs.

mod common;

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(common::repo_root().join("README.md")).unwrap()
}

/// The section of the README under `heading` (up to the next heading of the same level).
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("the README has a `{heading}` section"));
    let level = heading.split(' ').next().unwrap();
    let body = &text[start + heading.len() + 2..];
    let end = body
        .match_indices(&format!("\n{level} "))
        .next()
        .map_or(body.len(), |(i, _)| i);
    &body[..end]
}

/// The first fenced block of `lang` in `text`.
fn block<'a>(text: &'a str, lang: &str) -> &'a str {
    let open = format!("```{lang}\n");
    let start = text.find(&open).unwrap_or_else(|| panic!("a ```{lang} block")) + open.len();
    let end = text[start..].find("\n```").expect("the block is closed");
    &text[start..start + end]
}

/// Timings differ from run to run; everything else is compared byte for byte.
fn without_timings(text: &str) -> String {
    let ms = regex_lite::Regex::new(r"\(\d+ ms\)").unwrap();
    ms.replace_all(text.trim_end(), "(… ms)").into_owned()
}

#[test]
fn what_it_prints_is_what_it_prints() {
    let text = readme();
    let shown = block(section(&text, "## What it prints"), "text");
    let (command, printed) = shown.split_once('\n').unwrap();
    let args = command
        .strip_prefix("$ cargo run --release -- ")
        .expect("the example starts with the command it runs");
    let output = common::bin()
        .current_dir(common::repo_root())
        .args(args.split_whitespace())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "findings exit 1");
    let actual = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        without_timings(printed),
        without_timings(&actual),
        "the README's example output is stale: paste the real output of `{args}`"
    );
}

/// "The whole fixture (`check fixtures/effect-app`) reports N findings at S sites (E errors, W
/// warnings) in M files."
#[test]
fn the_counts_the_readme_gives_are_the_counts() {
    let text = readme();
    let claim = regex_lite::Regex::new(
        r"`check (fixtures/[a-z0-9-]+)`\) reports (\d+) findings at (\d+) sites \((\d+) errors?, (\d+) warnings?\) in (\d+) files",
    )
    .unwrap();
    let mut seen = 0;
    for caps in claim.captures_iter(&text) {
        seen += 1;
        let (code, report) = common::check_json(&common::repo_root(), &[&caps[1]]);
        assert_eq!(code, 1, "{}", &caps[1]);
        let summary = &report["summary"];
        let actual = (
            report["diagnostics"].as_array().unwrap().len(),
            summary["sites"].as_u64().unwrap() as usize,
            summary["errors"].as_u64().unwrap() as usize,
            summary["warnings"].as_u64().unwrap() as usize,
            summary["files"].as_u64().unwrap() as usize,
        );
        let claimed: (usize, usize, usize, usize, usize) = (
            caps[2].parse().unwrap(),
            caps[3].parse().unwrap(),
            caps[4].parse().unwrap(),
            caps[5].parse().unwrap(),
            caps[6].parse().unwrap(),
        );
        assert_eq!(
            claimed, actual,
            "README: `check {}` (findings, sites, errors, warnings, files)",
            &caps[1]
        );
    }
    assert!(seen > 0, "the README gives a fixture's counts");
}

/// The first Lua block of "In the editor", pasted into a headless Neovim as a user's config,
/// with `retrylint` on PATH: opening a file of the demo project shows its finding.
#[test]
#[ignore = "needs Neovim 0.7+ (apt-get install neovim); .ci/run runs it"]
fn the_neovim_snippet_works() {
    let nvim = common::nvim();
    let text = readme();
    let snippet = block(section(&text, "## In the editor"), "lua");
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("shop");
    common::copy_dir(&common::repo_root().join("demo/shop"), &project);
    let config = dir.path().join("retrylint.lua");
    std::fs::write(&config, snippet).unwrap();
    let probe = dir.path().join("probe.lua");
    std::fs::write(&probe, PROBE).unwrap();
    let out = dir.path().join("out.json");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_retrylint")).parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let file = project.join("src/orders/PlaceOrder.ts");
    let (status, stderr) = common::run_nvim(
        &nvim,
        dir.path(),
        &[&config, &probe],
        &[
            ("PATH", path.as_os_str()),
            ("RETRYLINT_NO_CACHE", "1".as_ref()),
            ("RETRYLINT_FILE", file.as_os_str()),
            ("RETRYLINT_OUT", out.as_os_str()),
        ],
    );
    let report = std::fs::read_to_string(&out).unwrap_or_else(|_| panic!("no result from Neovim ({status}): {stderr}"));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["ok"], true, "no diagnostics arrived: {report}\n{stderr}");
    let received: Vec<(String, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["lnum"].as_u64().unwrap(),
            )
        })
        .collect();
    // Line 10 of PlaceOrder.ts, 0-based in Neovim.
    assert_eq!(received, vec![("transient-retry-on-append".to_string(), 9)], "{stderr}");
}

/// Opens the file the test names, waits for diagnostics, writes what arrived, quits.
const PROBE: &str = r#"
local out = assert(os.getenv("RETRYLINT_OUT"))
local file = assert(os.getenv("RETRYLINT_FILE"))
local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local arrived = vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then code = d.user_data.lsp.code end
    table.insert(found, { code = code, lnum = d.lnum })
  end
  return { ok = arrived, diagnostics = found }
end)
local f = io.open(out, "w")
f:write(vim.fn.json_encode(ok and err or { ok = false, error = tostring(err), diagnostics = {} }))
f:close()
vim.cmd("qall!")
"#;
