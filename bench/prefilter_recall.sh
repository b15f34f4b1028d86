#!/usr/bin/env bash
# The prefilter's keep rate and recall: for each corpus, how many files it keeps, how many hold
# facts when every file is parsed (`--no-prefilter`), and how many of those it drops (each one
# a miss: must be 0). See examples/prefilter_recall/recall.rs for what counts as a fact.
#
#   bench/prefilter_recall.sh [--seed S] [CORPUS...]   CORPUS: a directory, `fixtures` (each
#                                                        project under fixtures/), or
#                                                        `generated` (bench/gen_corpus.py
#                                                        --seed S --files 5000). Default:
#                                                        fixtures generated
#
# Prints one line per corpus and what kept its files (`kept_by: REASON=N ...`), and every
# dropped file with its facts. Exits 1 on a miss. For each kept file and why, and each file the
# demand stage reads: target/release/examples/prefilter_recall DIR --list-kept --list-read.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

SEED=1
CORPORA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seed) SEED="$2"; shift ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "prefilter_recall.sh: unknown option $1" >&2; exit 2 ;;
    *) CORPORA+=("$1") ;;
  esac
  shift
done
[[ ${#CORPORA[@]} -gt 0 ]] || CORPORA=(fixtures generated)

cargo build --release --locked --quiet --example prefilter_recall
RECALL="$ROOT/target/release/examples/prefilter_recall"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/retrylint-recall.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

misses=0
run() { # LABEL DIR
  local out status=0
  out="$("$RECALL" "$2" --list-dropped)" || status=$?
  [[ $status -le 1 ]] || { echo "prefilter_recall.sh: failed on $2" >&2; exit 2; }
  [[ $status -eq 0 ]] || misses=1
  printf '%s: %s\n' "$1" "$out"
}
for name in "${CORPORA[@]}"; do
  case "$name" in
    fixtures)
      for dir in fixtures/*/; do
        run "fixtures/$(basename "$dir")" "$dir"
      done
      ;;
    generated)
      python3 bench/gen_corpus.py "$WORK/corpus" --seed "$SEED" --files 5000 >&2
      run "generated (seed $SEED)" "$WORK/corpus"
      ;;
    *)
      [[ -d "$name" ]] || { echo "prefilter_recall.sh: no such directory: $name" >&2; exit 2; }
      run "$(basename "$name")" "$name"
      ;;
  esac
done
exit $misses
