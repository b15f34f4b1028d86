#!/usr/bin/env bash
# Benchmarks retrylint against a parse-only and a read-only baseline and ast-grep, in one run,
# and prints a markdown table.
#
#   bench/run.sh [--runs N] [--seed S] [CORPUS...]   CORPUS: a directory, or `generated`
#                                                      (the default: bench/gen_corpus.py --seed S),
#                                                      or `generated-sdk` (the same plus ~250 MB
#                                                      of generated SDK clients), or a name of
#                                                      bench/corpora.tsv (`effect`: a public
#                                                      repository at a pinned commit)
#   bench/run.sh --smoke                             each tool once on a small generated corpus,
#                                                      with sanity checks (for CI)
#
# A named corpus is the pinned commit of its repository, written into a temporary directory
# (`git archive`), never into this one: from a bare snapshot `OWNER+NAME` (or `OWNER+NAME/repo`)
# under $RETRYLINT_REALWORLD_DIR (default /work/.mirror, as bench/realworld/run.py reads them)
# if there is one holding the commit, else from a clone of its URL kept in
# ${BENCH_CORPUS_DIR:-$TMPDIR/retrylint-corpus}-git/OWNER+NAME (fetched once).
#
# Each tool first runs once under GNU time (its output is checked and counted; its "Maximum
# resident set size" is the peak RSS; the warm row's run is one after the cache is filled), then
# N more times (default 5) after a warm-up, for the median wall time: with hyperfine, installed
# from Debian if missing (BENCH_NO_HYPERFINE=1: a bash loop instead). Also installs GNU time,
# Node.js and @ast-grep/cli (into bench/.tools, not tracked). The load average before each
# corpus is printed: other work on the machine skews it.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

RUNS=5
SEED=1
SMOKE=0
CORPORA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --smoke) SMOKE=1 RUNS=1 ;;
    --runs) RUNS="$2"; shift ;;
    --seed) SEED="$2"; shift ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) CORPORA+=("$1") ;;
  esac
  shift
done
[[ ${#CORPORA[@]} -gt 0 ]] || CORPORA=(generated)

AST_GREP_VERSION="${AST_GREP_VERSION:-0.51.1}"
TOOLS="$ROOT/bench/.tools"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/retrylint-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log() { echo "run.sh: $*" >&2; }

# ------------------------------------------------------------------ tools
APT_UPDATED=0
apt_install() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    apt-get update -qq >/dev/null
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
[[ -x /usr/bin/time ]] || { log "installing GNU time"; apt_install time; }
HYPERFINE=""
if [[ $SMOKE -eq 0 && -z "${BENCH_NO_HYPERFINE:-}" ]]; then
  command -v hyperfine >/dev/null || { log "installing hyperfine"; apt_install hyperfine || true; }
  HYPERFINE="$(command -v hyperfine || true)"
fi
if ! command -v npm >/dev/null; then
  log "installing Node.js"
  apt_install nodejs npm
fi
AST_GREP="$TOOLS/node_modules/@ast-grep/cli/ast-grep"
if [[ ! -x "$AST_GREP" ]] || [[ "$("$AST_GREP" --version)" != "ast-grep $AST_GREP_VERSION" ]]; then
  log "installing @ast-grep/cli@$AST_GREP_VERSION into bench/.tools"
  mkdir -p "$TOOLS"
  npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --loglevel=error "@ast-grep/cli@$AST_GREP_VERSION" >&2
fi

log "building (release)"
cargo build --release --locked --quiet
cargo build --release --locked --quiet --example parse_only --example lsp_latency
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
RETRYLINT="$TARGET/release/retrylint"
PARSE_ONLY="$TARGET/release/examples/parse_only"
LSP_LATENCY="$TARGET/release/examples/lsp_latency"

# ----------------------------------------------------------------- corpora
resolve_corpus() { # NAME -> directory
  if [[ "$1" == generated-sdk ]]; then
    # The generated corpus beside ~250 MB of generated SDK clients (gen_corpus.py --sdk-mb):
    # generated code must not dominate a run.
    local dir="${BENCH_CORPUS_DIR:-${TMPDIR:-/tmp}/retrylint-corpus}-sdk"
    python3 bench/gen_corpus.py "$dir" --seed "$SEED" --files 5000 --sdk-mb 250 >&2
    echo "$dir"
  elif [[ "$1" == generated ]]; then
    local dir files=5000
    if [[ $SMOKE -eq 1 ]]; then
      dir="$WORK/corpus"
      files=300
    else
      dir="${BENCH_CORPUS_DIR:-${TMPDIR:-/tmp}/retrylint-corpus}"
    fi
    python3 bench/gen_corpus.py "$dir" --seed "$SEED" --files "$files" >&2
    echo "$dir"
  elif [[ ! -d "$1" ]] && named_corpus "$1" >/dev/null; then
    local url commit slug git dir="$WORK/named/$1"
    read -r url commit < <(named_corpus "$1")
    slug="$(basename "$(dirname "$url")")+$(basename "$url")"
    git="${RETRYLINT_REALWORLD_DIR:-/work/.mirror}/$slug"
    [[ -d "$git/repo" ]] && git="$git/repo"
    if ! git --git-dir="$git" cat-file -e "$commit^{commit}" 2>/dev/null; then
      git="${BENCH_CORPUS_DIR:-${TMPDIR:-/tmp}/retrylint-corpus}-git/$slug"
      if ! git --git-dir="$git" cat-file -e "$commit^{commit}" 2>/dev/null; then
        log "fetching $url into $git"
        [[ -d "$git" ]] || git clone --quiet --bare --filter=blob:none "$url" "$git" >&2
        git --git-dir="$git" fetch --quiet origin "$commit" >&2 || true
      fi
    fi
    mkdir -p "$dir"
    git --git-dir="$git" archive "$commit" | tar -x -C "$dir"
    echo "$dir"
  else
    [[ -d "$1" ]] || { echo "run.sh: no such directory or named corpus: $1" >&2; exit 2; }
    (cd "$1" && pwd)
  fi
}
# named_corpus NAME -> "URL COMMIT" from bench/corpora.tsv (fails for another name)
named_corpus() {
  awk -F'\t' -v name="$1" 'NR > 1 && $1 == name { print $2, $3; found = 1 } END { exit !found }' \
    "$ROOT/bench/corpora.tsv"
}

# ----------------------------------------------------------------- measure
# measure [--prime] TAG OUTFILE CMD... : appends
# "tag<TAB>median_s<TAB>rss_kib<TAB>exit<TAB>cpu_s<TAB>min_s<TAB>max_s" to $WORK/results. --prime: one unmeasured run first (it fills the facts cache), so that every
# measured run, the one under GNU time included, is a warm one.
# median_of: "median min max" of the numbers on stdin.
median_of() { sort -g | awk '{ a[NR] = $1 } END { print ((NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[1], a[NR] }'; }
measure() {
  local prime=0
  if [[ "$1" == --prime ]]; then
    prime=1
    shift
  fi
  local tag="$1" out="$2"
  shift 2
  local status=0
  [[ $prime -eq 0 ]] || "$@" >/dev/null 2>&1 || true
  # One run under GNU time: its output is kept (for the checks and counts), its peak RSS and
  # (without hyperfine) its CPU time.
  /usr/bin/time -v -o "$WORK/$tag.time" "$@" >"$out" 2>"$WORK/$tag.stderr" || status=$?
  local rss cpu
  rss="$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/$tag.time")"
  cpu="$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$WORK/$tag.time")"
  if [[ $status -gt 1 ]]; then
    log "$tag failed (exit $status):"
    tail -5 "$WORK/$tag.stderr" >&2
    exit 1
  fi
  local median low high
  if [[ -n "$HYPERFINE" ]]; then
    local cmd
    cmd="$(printf '%q ' "$@")"
    "$HYPERFINE" --shell=none --warmup 1 --runs "$RUNS" --ignore-failure --style none \
      --export-json "$WORK/$tag.json" -- "$cmd" >/dev/null
    read -r median cpu low high < <(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print(r["median"], r["user"] + r["system"], r["min"], r["max"])' "$WORK/$tag.json")
  else
    [[ $SMOKE -eq 1 ]] || "$@" >/dev/null 2>&1 || true # warm-up
    local i start end
    for ((i = 0; i < RUNS; i++)); do
      start=$(date +%s%N)
      "$@" >/dev/null 2>&1 || true
      end=$(date +%s%N)
      echo "$(((end - start) / 1000))e-6"
    done | median_of >"$WORK/$tag.median"
    read -r median low high <"$WORK/$tag.median"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$median" "$rss" "$status" "$cpu" "$low" "$high" >>"$WORK/results"
}

: >"$WORK/results"
: >"$WORK/corpora"
n=0
for name in "${CORPORA[@]}"; do
  dir="$(resolve_corpus "$name")"
  label="$(basename "$dir")"
  [[ "$name" == generated ]] && label="generated (seed $SEED)"
  [[ "$name" == generated-sdk ]] && label="generated + 250 MB SDK"
  if [[ ! -d "$name" ]] && named_corpus "$name" >/dev/null; then
    label="$name @ $(named_corpus "$name" | cut -d' ' -f2 | cut -c1-7)"
  fi
  n=$((n + 1))
  log "measuring $label: $dir"
  printf '%s\t%s\t%s\t%s\n' "$n" "$label" "$dir" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/corpora"
  # ast-grep sees the files retrylint checks: no declaration files, no HTML (ast-grep scans
  # its <script>s), nothing over retrylint's default max-file-size (1 MiB).
  SG_ARGS=(scan -c "$ROOT/bench/ast-grep/sgconfig.yml" "$dir" --globs '!*.d.ts' --globs '!*.d.mts'
    --globs '!*.d.cts' --globs '!*.html' --globs '!*.htm')
  while IFS= read -r -d '' big; do
    SG_ARGS+=(--globs "!**/$(printf '%s' "${big#"$dir"/}" | sed 's/[][{}*?\\]/\\&/g')")
  done < <(find "$dir" -type f \( -name '*.ts' -o -name '*.tsx' -o -name '*.mts' -o -name '*.cts' \) -size +1024k -print0)
  measure "$n.read-only" "$WORK/$n.read-only.out" "$PARSE_ONLY" "$dir" --read-only
  measure "$n.parse-only" "$WORK/$n.parse-only.out" "$PARSE_ONLY" "$dir"
  # Cold: no facts cache. Warm: the cache of the run before (an unmeasured run fills it, so
  # the peak RSS and CPU are a warm run's too). All files: the worst case, every file parsed
  # as if each passed the prefilter.
  measure "$n.retrylint" "$WORK/$n.retrylint.out" "$RETRYLINT" check "$dir" --format json --no-cache
  rm -rf "$WORK/cache" && mkdir -p "$WORK/cache"
  measure --prime "$n.retrylint-warm" "$WORK/$n.retrylint-warm.out" env RETRYLINT_CACHE_DIR="$WORK/cache" \
    "$RETRYLINT" check "$dir" --format json
  measure "$n.retrylint-all" "$WORK/$n.retrylint-all.out" "$RETRYLINT" check "$dir" --format json \
    --no-cache --no-prefilter
  measure "$n.ast-grep" "$WORK/$n.ast-grep.out" "$AST_GREP" "${SG_ARGS[@]}" --json
  # The language server: edit -> diagnostics on a file with a finding (not in smoke runs).
  if [[ $SMOKE -eq 0 ]]; then
    target="$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["diagnostics"]; print(d[0]["path"] if d else "")' "$WORK/$n.retrylint.out")"
    if [[ -n "$target" ]]; then
      "$LSP_LATENCY" "$dir" "$target" 30 >"$WORK/$n.lsp" 2>/dev/null || echo "failed" >"$WORK/$n.lsp"
    fi
  fi
  # ast-grep's file count, from one more (unmeasured) run.
  "$AST_GREP" "${SG_ARGS[@]}" --inspect summary >/dev/null 2>"$WORK/$n.ast-grep.inspect" || true
done

python3 - "$WORK" "$SMOKE" "$RUNS" "${HYPERFINE:+hyperfine}" <<'EOF'
import json, re, sys
from pathlib import Path

work, smoke, runs, hyperfine = Path(sys.argv[1]), sys.argv[2] == "1", sys.argv[3], sys.argv[4] == "hyperfine"
results = {}
for line in (work / "results").read_text().splitlines():
    tag, median, rss, status, cpu, low, high = line.split("\t")
    results[tag] = (float(median), int(rss) / 1024, int(status), float(cpu), float(low), float(high))
failures = []
print("| tool | corpus | files | MB | median wall s | min–max s | files/s | MB/s | peak RSS MiB | ratio to parse-only | CPU s (ratio) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
notes = []
for line in (work / "corpora").read_text().splitlines():
    n, label, directory, load = line.split("\t")
    read = dict(kv.split("=") for kv in (work / f"{n}.read-only.out").read_text().split())
    parse = dict(kv.split("=") for kv in (work / f"{n}.parse-only.out").read_text().split())
    lint = json.loads((work / f"{n}.retrylint.out").read_text())
    sg = json.loads((work / f"{n}.ast-grep.out").read_text() or "[]")
    m = re.search(r"scannedFileCount=(\d+)", (work / f"{n}.ast-grep.inspect").read_text())
    sg_files = int(m.group(1)) if m else None
    mb = int(read["bytes"]) / 1e6
    files = {"read-only": int(read["files"]), "parse-only": int(parse["files"]),
             "retrylint": lint["summary"]["files"], "ast-grep": sg_files}
    warm = json.loads((work / f"{n}.retrylint-warm.out").read_text())
    everything = json.loads((work / f"{n}.retrylint-all.out").read_text())
    for other, what in [(warm, "warm"), (everything, "all files")]:
        if other["diagnostics"] != lint["diagnostics"]:
            failures.append(f"{label}: retrylint ({what}) reported other findings than the cold run")
    # The warm row measures runs answered by the cache, not the run that filled it.
    if warm["summary"].get("cached", 0) < warm["summary"]["files"] // 2:
        failures.append(f"{label}: the warm run answered {warm['summary'].get('cached', 0)} of "
                        f"{warm['summary']['files']} files from the cache: its row is not a warm run")
    files["retrylint-warm"] = files["retrylint-all"] = files["retrylint"]
    base = results[f"{n}.parse-only"][0]
    base_cpu = results[f"{n}.parse-only"][3]
    names = {"retrylint": "retrylint (cold)", "retrylint-warm": "retrylint (warm cache)",
             "retrylint-all": "retrylint (every file parsed)"}
    for tool in ["retrylint", "retrylint-warm", "retrylint-all", "parse-only", "read-only", "ast-grep"]:
        wall, rss, _, cpu, low, high = results[f"{n}.{tool}"]
        count = files[tool]
        print(f"| {names.get(tool, tool)} | {label} | {count if count is not None else '?'} | {mb:.1f} | {wall:.3f} | "
              f"{low:.3f}–{high:.3f} | "
              f"{(count or 0) / wall:,.0f} | {mb / wall:.1f} | {rss:.0f} | {wall / base:.2f}x | {cpu:.2f} ({cpu / base_cpu:.2f}x) |")
    lsp = work / f"{n}.lsp"
    if lsp.exists():
        notes.append(f"{label}: language server: {lsp.read_text().strip()}")
    rules = {}
    for d in lint["diagnostics"]:
        rules[d["rule"]] = rules.get(d["rule"], 0) + 1
    notes.append(f"{label}: retrylint parsed {lint['summary']['parsed']} of {files['retrylint']} files "
                 f"(warm: {warm['summary'].get('cached', 0)} answered by the cache), "
                 f"{len(lint['diagnostics'])} findings {dict(sorted(rules.items()))}; "
                 f"parse-only: {parse['error_trees']} trees with errors; ast-grep: {len(sg)} matches; "
                 f"load average before: {load}")
    if len(set(v for v in files.values() if v is not None)) > 1:
        notes.append(f"{label}: the tools saw different file counts: {files}")
    if smoke:
        manifest = json.loads((Path(directory) / ".corpus.json").read_text())
        planted = set(manifest["planted"])
        found = {d["rule"] for d in lint["diagnostics"]}
        for rule in ["inline-schedule", "retry-in-repository"]:
            if rule not in found:
                failures.append(f"retrylint found no {rule} in the generated corpus")
        for d in lint["diagnostics"]:
            rel = str(Path(d["path"]).resolve().relative_to(Path(directory).resolve()))
            if rel not in planted:
                failures.append(f"retrylint reported {d['rule']} in {rel}, a file without planted retry code")
        if not sg:
            failures.append("ast-grep matched nothing in the generated corpus")
        # retrylint skips test code by default; parse-only reads every file.
        checked = manifest["files"] - manifest.get("tests", 0)
        if files["retrylint"] != checked or files["parse-only"] != manifest["files"]:
            failures.append(f"file counts {files} differ from the corpus's {manifest['files']} "
                            f"({checked} without its {manifest.get('tests', 0)} test files)")
print()
how = "one run each (smoke)" if smoke else f"median of {runs} runs after a warm-up ({'hyperfine' if hyperfine else 'bash loop'})"
cpu = "mean of the timed runs" if hyperfine else "of the GNU time run"
print(f"Wall time: {how}; peak RSS: one run under GNU time; CPU s: user + system, {cpu}.")
for note in notes:
    print(f"- {note}")
if failures:
    for f in failures:
        print(f"smoke: FAIL: {f}", file=sys.stderr)
    sys.exit(1)
if smoke:
    print("smoke: ok")
EOF
