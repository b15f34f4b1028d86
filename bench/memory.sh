#!/usr/bin/env bash
# Peak memory (and time) of `retrylint check` on generated monorepos (bench/gen_corpus.py),
# as bench/RESULTS-2026-12-02-memory.md reports it: for each size, a cold run (no cache), the
# first run (it writes the cache), a warm run (it reads it), and a cold run with every file
# parsed (`--no-prefilter`), each repeated; prints a markdown table of medians and spreads
# (min–max) of wall and CPU seconds and peak RSS, from GNU time.
#
#   bench/memory.sh [--bin PATH] [--runs N] [--dir DIR] [--seed S] [--modes LIST] FILES...
#
# FILES: corpus sizes (default 50000 200000). --dir keeps the corpora there (default: a
# temporary directory, removed afterwards); a corpus already there with the same seed and
# size is reused. --modes: a comma-separated subset of cold,first,warm,all (default all four).
# The default binary is target/release/retrylint (built if missing); --runs defaults to 3.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/target/release/retrylint"
RUNS=3
DIR=""
SEED=1
MODES="cold,first,warm,all"
SIZES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --dir) DIR="$2"; shift ;;
    --seed) SEED="$2"; shift ;;
    --modes) MODES="$2"; shift ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "memory.sh: unknown option $1" >&2; exit 2 ;;
    *) SIZES+=("$1") ;;
  esac
  shift
done
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(50000 200000)
[[ -x /usr/bin/time ]] || { echo "memory.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
if [[ ! -x "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release --locked --quiet)
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/retrylint-memory.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
[[ -n "$DIR" ]] || DIR="$WORK/corpora"
mkdir -p "$DIR"

# One run under GNU time: appends "wall cpu rss_kib findings" to $WORK/rows.
measure() { # CORPUS CACHE_DIR ARGS...
  local corpus="$1" cache="$2"
  shift 2
  local status=0
  (cd "$corpus" && RETRYLINT_CACHE_DIR="$cache" /usr/bin/time -o "$WORK/time" -f "%e %U %S %M" \
    "$BIN" check . --format json "$@" >"$WORK/out.json" 2>/dev/null) || status=$?
  [[ $status -le 1 ]] || { echo "memory.sh: retrylint exited $status on $corpus" >&2; exit 2; }
  local wall user sys rss findings
  read -r wall user sys rss < <(tail -n 1 "$WORK/time")
  findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["diagnostics"]))' "$WORK/out.json")
  echo "$wall $(python3 -c "print(f'{$user + $sys:.2f}')") $rss $findings" >>"$WORK/rows"
}

# Median and spread of the rows measured: "| wall | CPU | RSS | findings |" cells.
summary() {
  python3 - "$WORK/rows" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def cell(values, fmt):
    values = sorted(values)
    mid = statistics.median(values)
    return f"{fmt(mid)} ({fmt(values[0])}–{fmt(values[-1])})" if len(values) > 1 else fmt(mid)
wall = cell([float(r[0]) for r in rows], lambda v: f"{v:.2f}")
cpu = cell([float(r[1]) for r in rows], lambda v: f"{v:.2f}")
rss = cell([int(r[2]) / 1024 for r in rows], lambda v: f"{v:.0f}")
findings = sorted({r[3] for r in rows})
print(f"{wall} | {cpu} | {rss} | {', '.join(findings)} |")
EOF
}

echo "| files | run | wall s | CPU s | peak RSS MiB | findings |"
echo "|---:|---|---:|---:|---:|---:|"
for size in "${SIZES[@]}"; do
  corpus="$DIR/corpus-$SEED-$size"
  if [[ ! -f "$corpus/.corpus.json" ]]; then
    python3 "$ROOT/bench/gen_corpus.py" "$corpus" --seed "$SEED" --files "$size" >&2
  fi
  for mode in ${MODES//,/ }; do
    cache="$WORK/cache"
    if [[ $mode == warm && ! -d $cache ]]; then
      measure "$corpus" "$cache" # fills the cache; not counted
    fi
    : >"$WORK/rows"
    for _ in $(seq "$RUNS"); do
      case "$mode" in
        cold) measure "$corpus" "$cache" --no-cache ;;
        first) rm -rf "$cache"; measure "$corpus" "$cache" ;;
        warm) measure "$corpus" "$cache" ;;
        all) measure "$corpus" "$cache" --no-cache --no-prefilter ;;
        *) echo "memory.sh: unknown mode $mode" >&2; exit 2 ;;
      esac
    done
    echo "| $size | $mode | $(summary)"
  done
  rm -rf "$WORK/cache"
done
