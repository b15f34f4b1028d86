#!/usr/bin/env python3
"""Measure retrylint on real repositories against a reviewer's ground truth.

    python3 bench/realworld/run.py --bin target/release/retrylint
    python3 bench/realworld/run.py --bin X --repo hazel --details
    python3 bench/realworld/run.py --bin X --smoke      # offline, on sample/ (CI)

Repositories are listed in repos.tsv (name, url, commit, kind, versions, why, scope).
Their snapshots are bare git directories named `owner+repo` (optionally with the git
directory in a `repo/` subfolder) under $RETRYLINT_REALWORLD_DIR (default /work/.mirror);
a repository without a snapshot is skipped with a note. The pinned commit is written
into a temporary directory (blobs missing from a snapshot are skipped), and the binary
runs there as `check . --format json`.

Ground truth is truth/<name>.tsv: path, line, rule, verdict (yes | maybe | no), reason.
A finding matches a truth row with the same path and rule whose line is within +-2 of the
finding's line or of one of its "used here" labels (a named policy's defect is reported once,
at its definition, with its uses as labels: issue 13.4); each row and each finding is used at
most once (nearest line first, the finding's own line before a use's). Then:

  found        a `yes` row matched                    missed   a `yes` row not matched
  maybe        a `maybe` row matched (in neither recall nor precision)
  false alarm  a finding matching a `no` row (a trap), or matching no row at all
  dup          an unmatched finding of a policy-defect rule (inline-schedule,
               uncapped-schedule, unjittered-schedule, policy-over-budget) whose message
               names a policy (retry policy `NAME`) that a yes/maybe row of the same
               file and rule points at (NAME is on that row's source line): the same
               defect reported again at another use site (issue 13.4); not a false alarm
  out of scope a finding outside the repository's scope column (not reviewed)

recall = found / yes rows, precision = found / (found + false alarms).
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE_TOLERANCE = 2
POLICY_DEFECT_RULES = {
    "inline-schedule",
    "uncapped-schedule",
    "unjittered-schedule",
    "policy-over-budget",
}
VERDICTS = {"yes", "maybe", "no"}


class BenchError(Exception):
    """The script's own machinery failed (bad input file, binary error)."""


@dataclass
class TruthRow:
    path: str
    line: int
    rule: str
    verdict: str
    reason: str
    source: str  # file:line of the row, for messages


@dataclass
class Finding:
    path: str
    line: int
    rule: str
    message: str = ""
    # Where the finding's "used here" labels point: a named policy's defect is reported once,
    # at its definition (issue 13.4), and matches a truth row at any of its uses too.
    uses: tuple = ()


@dataclass
class Outcome:
    rows: list[tuple[str, object, object]] = field(default_factory=list)
    # (class, truth row or None, finding or None); class in
    # found, missed, maybe, maybe-unmatched, trap-ok, false-alarm, dup, out-of-scope


def read_tsv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise BenchError(f"cannot read {path}: {err}") from err
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise BenchError(f"{path}: empty")
    header = lines[0].split("\t")
    out = []
    for n, ln in enumerate(lines[1:], start=2):
        cells = ln.split("\t")
        if len(cells) < len(header):
            cells += [""] * (len(header) - len(cells))
        if len(cells) > len(header):
            raise BenchError(f"{path}:{n}: {len(cells)} cells, header has {len(header)}")
        row = dict(zip(header, cells))
        row["__line__"] = str(n)
        out.append(row)
    return out


def load_truth(path: Path) -> list[TruthRow]:
    rows = []
    for r in read_tsv(path):
        src = f"{path.name}:{r['__line__']}"
        try:
            line = int(r["line"])
        except (KeyError, ValueError) as err:
            raise BenchError(f"{src}: bad line {r.get('line')!r}") from err
        verdict = r.get("verdict", "")
        if verdict not in VERDICTS:
            raise BenchError(f"{src}: verdict must be yes, maybe or no, not {verdict!r}")
        if not r.get("path") or not r.get("rule"):
            raise BenchError(f"{src}: path and rule are required")
        rows.append(TruthRow(r["path"], line, r["rule"], verdict, r.get("reason", ""), src))
    return rows


def find_snapshot(root: Path, url: str) -> Path | None:
    owner_repo = url.rstrip("/").removesuffix(".git").split("github.com/")[-1]
    base = root / owner_repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def extract(gitdir: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Write the tree of `commit` into dest; blobs absent from the snapshot are skipped."""
    ls = subprocess.run(
        ["git", f"--git-dir={gitdir}", "ls-tree", "-r", "-z", commit],
        capture_output=True,
    )
    if ls.returncode != 0:
        raise BenchError(f"git ls-tree {commit} in {gitdir}: {ls.stderr.decode(errors='replace').strip()}")
    entries = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":  # submodules and symlinks are left out
            continue
        entries.append((sha, os.fsdecode(path)))
    proc = subprocess.Popen(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        try:
            for sha, _ in entries:
                proc.stdin.write(sha + b"\n")
        finally:
            proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    missing = 0
    for _sha, path in entries:
        header = proc.stdout.readline().split()
        if not header:
            raise BenchError(f"git cat-file stopped early in {gitdir}")
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    feeder.join()
    if proc.wait() != 0:
        raise BenchError(f"git cat-file failed in {gitdir}")
    return len(entries), missing


def run_retrylint(binary: str, workdir: Path) -> tuple[list[Finding], int]:
    try:
        proc = subprocess.run(
            [binary, "check", ".", "--format", "json"],
            cwd=workdir,
            capture_output=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BenchError(f"cannot run {binary}: {err}") from err
    if proc.returncode not in (0, 1):
        raise BenchError(
            f"{binary} exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:500]}"
        )
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as err:
        raise BenchError(f"{binary} printed no JSON: {err}") from err
    findings = []
    for d in doc.get("diagnostics", []):
        path = d["path"].removeprefix("./")
        uses = tuple(
            (r["path"].removeprefix("./"), int(r["line"]))
            for r in d.get("related") or []
            if r.get("message") == "used here"
        )
        findings.append(Finding(path, int(d["line"]), d["rule"], d.get("message", ""), uses))
    return findings, len(doc.get("notes", []))


def in_scope(path: str, scope: list[str]) -> bool:
    return any(s in (".", "") or path == s or path.startswith(s.rstrip("/") + "/") for s in scope)


POLICY_NAME = re.compile(r"retry policy `([A-Za-z_$][\w$.]*)`")


def source_line(workdir: Path, path: str, line: int, cache: dict) -> str:
    if path not in cache:
        try:
            cache[path] = (workdir / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else ""


def is_dup(f: Finding, rows: list[TruthRow], workdir: Path, cache: dict) -> bool:
    if f.rule not in POLICY_DEFECT_RULES:
        return False
    m = POLICY_NAME.search(f.message)
    if not m:
        return False
    name = m.group(1).split(".")[-1]
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return any(t.verdict != "no" and pattern.search(source_line(workdir, t.path, t.line, cache)) for t in rows)


def classify(truth: list[TruthRow], findings: list[Finding], scope: list[str], workdir: Path) -> Outcome:
    out = Outcome()
    cache: dict = {}
    by_key: dict[tuple[str, str], list[TruthRow]] = defaultdict(list)
    for t in truth:
        by_key[(t.path, t.rule)].append(t)
    pairs = []
    for fi, f in enumerate(findings):
        # The finding's own place first; a use of the policy it names next (a half line
        # further, so the definition wins a tie).
        places = [(f.path, f.line, 0.0)] + [(path, line, 0.5) for path, line in f.uses]
        for path, line, penalty in places:
            for t in by_key.get((path, f.rule), []):
                dist = abs(t.line - line)
                if dist <= LINE_TOLERANCE:
                    pairs.append((dist + penalty, fi, id(t), t))
    pairs.sort(key=lambda p: (p[0], p[1]))
    used_f: set[int] = set()
    used_t: set[int] = set()
    matched: dict[int, TruthRow] = {}
    for _dist, fi, tid, t in pairs:
        if fi in used_f or tid in used_t:
            continue
        used_f.add(fi)
        used_t.add(tid)
        matched[fi] = t
    for fi, f in enumerate(findings):
        t = matched.get(fi)
        if t is not None:
            cls = {"yes": "found", "maybe": "maybe", "no": "false-alarm"}[t.verdict]
            out.rows.append((cls, t, f))
        elif not in_scope(f.path, scope):
            out.rows.append(("out-of-scope", None, f))
        elif is_dup(f, by_key.get((f.path, f.rule), []), workdir, cache):
            out.rows.append(("dup", None, f))
        else:
            out.rows.append(("false-alarm", None, f))
    for t in truth:
        if id(t) in used_t:
            continue
        cls = {"yes": "missed", "maybe": "maybe-unmatched", "no": "trap-ok"}[t.verdict]
        out.rows.append((cls, t, None))
    return out


COLUMNS = ["yes", "found", "missed", "false", "maybe", "dup", "recall", "precision"]


def tally(rows) -> dict[str, int]:
    c = defaultdict(int)
    for cls, t, _f in rows:
        if t is not None and t.verdict == "yes":
            c["yes"] += 1
        c[cls] += 1
    return c


def fmt_ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "-"


def table(title: str, groups: dict[str, list]) -> str:
    name_w = max([len(title)] + [len(k) for k in groups] + [5])
    head = f"{title:<{name_w}}  " + "  ".join(f"{c:>9}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    total: list = []
    for key in sorted(groups):
        rows = groups[key]
        total += rows
        lines.append(row_line(key, rows, name_w))
    lines.append("-" * len(head))
    lines.append(row_line("total", total, name_w))
    return "\n".join(lines)


def row_line(key: str, rows, name_w: int) -> str:
    c = tally(rows)
    vals = [
        c["yes"], c["found"], c["missed"], c["false-alarm"], c["maybe"], c["dup"],
        fmt_ratio(c["found"], c["yes"]), fmt_ratio(c["found"], c["found"] + c["false-alarm"]),
    ]
    return f"{key:<{name_w}}  " + "  ".join(f"{v:>9}" for v in vals)


def details(name: str, outcome: Outcome) -> str:
    order = ["missed", "false-alarm", "dup", "maybe", "found", "maybe-unmatched", "trap-ok"]
    lines = []
    for cls in order:
        for c, t, f in sorted(
            (r for r in outcome.rows if r[0] == cls),
            key=lambda r: ((r[1] or r[2]).path, (r[1] or r[2]).line, (r[1] or r[2]).rule),
        ):
            if t is not None:
                where = f"{t.path}:{t.line} {t.rule}"
                extra = f"  -- {t.reason}" if c != "found" else ""
                got = f" (found at {f.line})" if f is not None and f.line != t.line else ""
                lines.append(f"  {c:<15} {where}{got}{extra}")
            else:
                lines.append(f"  {c:<15} {f.path}:{f.line} {f.rule}  -- {f.message[:140]}")
    return f"{name}:\n" + "\n".join(lines) if lines else f"{name}: nothing"


def measure(name: str, workdir: Path, truth_file: Path, scope: list[str], binary: str):
    truth = load_truth(truth_file)
    findings, notes = run_retrylint(binary, workdir)
    return classify(truth, findings, scope, workdir), len(findings), notes


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/retrylint", help="retrylint binary")
    ap.add_argument("--smoke", action="store_true", help="run on the checked-in sample only")
    ap.add_argument("--repo", action="append", help="only these repositories (by name)")
    ap.add_argument("--details", action="store_true", help="list every classified row")
    ap.add_argument("--keep", metavar="DIR", help="extract checkouts into DIR and keep them")
    args = ap.parse_args(argv)
    binary = args.bin
    if os.sep in binary or "/" in binary:
        binary = str(Path(binary).resolve())

    try:
        if args.smoke:
            return smoke(binary)
        return full(args, binary)
    except BenchError as err:
        print(f"run.py: error: {err}", file=sys.stderr)
        return 1


def smoke(binary: str) -> int:
    sample = HERE / "sample"
    outcome, nfind, _notes = measure("sample", sample, sample / "truth.tsv", ["."], binary)
    print(table("repo", {"sample": outcome.rows}))
    print()
    by_rule = defaultdict(list)
    for r in outcome.rows:
        by_rule[(r[1] or r[2]).rule].append(r)
    print(table("rule", by_rule))
    print()
    print(details("sample", outcome))
    c = tally(outcome.rows)
    problems = []
    if nfind == 0:
        problems.append("retrylint reported nothing on the sample")
    if c["found"] == 0:
        problems.append("no truth row was matched by a finding")
    if c["yes"] == 0:
        problems.append("the sample truth has no `yes` row")
    if problems:
        print("smoke: FAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"smoke: ok ({nfind} findings, {c['found']} of {c['yes']} truth rows matched)")
    return 0


def full(args, binary: str) -> int:
    root = Path(os.environ.get("RETRYLINT_REALWORLD_DIR", "/work/.mirror"))
    repos = read_tsv(HERE / "repos.tsv")
    per_repo: dict[str, list] = {}
    per_rule: dict[str, list] = defaultdict(list)
    outcomes = {}
    skipped = []
    for r in repos:
        name = r["name"]
        if args.repo and name not in args.repo:
            continue
        snap = find_snapshot(root, r["url"])
        if snap is None:
            skipped.append(f"{name} (no snapshot of {r['url']} under {root})")
            continue
        scope = [s.strip() for s in r.get("scope", ".").split(",") if s.strip()] or ["."]
        if args.keep:
            work = Path(args.keep) / name
            if not work.exists():
                work.mkdir(parents=True)
                extract(snap, r["commit"], work)
            outcome, nfind, notes = measure(name, work, HERE / "truth" / f"{name}.tsv", scope, binary)
        else:
            with tempfile.TemporaryDirectory(prefix=f"rw-{name}-") as tmp:
                work = Path(tmp)
                extract(snap, r["commit"], work)
                outcome, nfind, notes = measure(name, work, HERE / "truth" / f"{name}.tsv", scope, binary)
        outcomes[name] = outcome
        per_repo[name] = outcome.rows
        for row in outcome.rows:
            if row[0] != "out-of-scope":
                per_rule[(row[1] or row[2]).rule].append(row)
        oos = sum(1 for row in outcome.rows if row[0] == "out-of-scope")
        print(f"# {name}: {nfind} findings ({oos} out of scope), {notes} notes", file=sys.stderr)
    if not per_repo:
        print("run.py: no repository snapshot found; nothing measured", file=sys.stderr)
        for s in skipped:
            print(f"  skipped {s}", file=sys.stderr)
        return 1
    print(table("repo", {k: [x for x in v if x[0] != "out-of-scope"] for k, v in per_repo.items()}))
    print()
    print(table("rule", per_rule))
    for s in skipped:
        print(f"skipped {s}")
    if args.details:
        for name, outcome in outcomes.items():
            print()
            print(details(name, outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
