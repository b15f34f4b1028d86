#!/usr/bin/env bash
# Times retrylint on single files of pathological shape and size (bench/gen_scale.py) and
# prints a markdown table: wall and CPU seconds and peak RSS, from GNU time.
#
#   bench/scale.sh [--bin PATH] [--timeout S] [SHAPE:SIZE ...]
#
# The default binary is target/release/retrylint (built if missing), the default timeout
# 300 s (a run killed at it is shown as `> S`), the default shapes those of
# bench/RESULTS-2026-12-02-scale.md. Files are written to a temporary directory.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/target/release/retrylint"
TIMEOUT=300
SHAPES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --timeout) TIMEOUT="$2"; shift ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "scale.sh: unknown option $1" >&2; exit 2 ;;
    *) SHAPES+=("$1") ;;
  esac
  shift
done
[[ ${#SHAPES[@]} -gt 0 ]] || SHAPES=(
  nested-blocks:2000 nested-blocks:16000 nested-arrows:2000 nested-arrows:8000
  nested-fns:2000 nested-fns:8000 nested-retries:1500 nested-retries:3000 policies:1 policies:4 policies:20 unbound:1 unbound:4
  rust:1 rust:4 rust-block:1 sql:8000 sql:32000
)
[[ -x /usr/bin/time ]] || { echo "scale.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
if [[ ! -x "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release --quiet)
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/retrylint-scale.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "| shape | size | bytes | wall s | CPU s | peak RSS MiB | findings |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for spec in "${SHAPES[@]}"; do
  shape="${spec%%:*}" size="${spec#*:}"
  dir="$WORK/$shape-$size"
  mkdir -p "$dir"
  bytes=$(python3 "$ROOT/bench/gen_scale.py" "$shape" "$size" "$dir" | sed 's/.*: \([0-9]*\) bytes/\1/')
  status=0
  (cd "$dir" && RETRYLINT_NO_CACHE=1 timeout "$TIMEOUT" /usr/bin/time -o "$WORK/time" -f "%e %U %S %M" \
    "$BIN" check . --format json >"$WORK/out.json" 2>/dev/null) || status=$?
  if [[ $status -eq 124 ]]; then
    echo "| $shape | $size | $bytes | > $TIMEOUT | | | |"
    continue
  fi
  read -r wall user sys rss < <(tail -n 1 "$WORK/time")
  findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["diagnostics"]))' "$WORK/out.json")
  cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
  echo "| $shape | $size | $bytes | $wall | $cpu | $((rss / 1024)) | $findings |"
done
