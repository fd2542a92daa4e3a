"""How the evaluator's cost grows with the fixture and the number of turns (issue 18).

```bash
python benchmarks/growth.py                     # the grid below, one repeat (~5-10 min on 2 cores)
python benchmarks/growth.py --quick             # 1/10 MB, 1/5 turns
python benchmarks/growth.py --headline-only     # 20 turns x 100 MB of small files only
PYTHONPATH=<checkout> python benchmarks/growth.py --output results/growth-before.json   # another package version
```

One body group (both variants, ``read``/``write``/``edit``), the embedded scripted model
writing one small file per turn, a turn-scoped ``path`` check on every turn (so every turn
is snapshotted) and a final ``changed-paths`` check. Dimensions, one at a time:

* fixture: 1, 10, 100 MB, as many small files (10 KiB each) and as one file (1 turn);
* turns: 1, 5, 20 with the 10 MB small-file fixture;
* headline: 20 turns x 100 MB of small files (10,240 files);
* groups: 8, 32, 128 small groups in one session (one tool call each, 1 KiB fixture);
* tool calls: 1, 50, 200 tool calls in one run (one group, one turn);
* response: one group whose final response is 2 MB of text.

``--memory-only`` runs the last three (``--memory-cases groups,calls,response`` picks).

For each: wall and CPU of ``pytest --skill-eval`` (CPU of pytest plus every pi it reaped),
peak RSS of the pytest process (``_rss_probe``), evidence bytes on disk (each inode counted
once, as ``du`` does) and apparent bytes (every path counted, as a copy would make), evidence
file count and how many of those are hard links, then ``skill-eval regrade`` and
``skill-eval view`` of the stored result (wall, peak RSS). Against:

* ``cp -r`` of the fixture, and its per-file cost; the evidence store's own copy of the same
  fixture (``copy_tree_atomic``, no sharing), per file;
* the pi floor: the same pi invocations replayed without the evaluator (``run.py``'s
  recorder and raw driver), measured once per turn count with a 1 MB fixture (pi never
  reads the fixture, so its floor does not grow with it).

Everything runs with ``TMPDIR`` pointed at a private directory: on a shared machine another
user's evaluator sweeps the scratch directory of the (finished) recording process, which the
floor replays from.

Output: a table on stdout and ``results/growth.json``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (the benchmark's own helpers)

SMALL_FILE = 10 * 1024


def make_root(dest: Path, *, mb: int, shape: str, turns: int) -> Path:
    """A definition root with one group: *turns* turns, a fixture of *mb* MB (*shape*)."""
    (dest / "skills" / "target").mkdir(parents=True)
    (dest / "skills" / "target" / "SKILL.md").write_text(
        "---\nname: target\ndescription: Target skill.\n---\n# target\n\nBody.\n", encoding="utf-8")
    fixture = dest / "fixture"
    fixture.mkdir()
    total = mb * 1024 * 1024
    if shape == "one":
        with open(fixture / "blob.bin", "wb") as out:
            for _ in range(mb):
                out.write(os.urandom(1024 * 1024))
    else:
        block = os.urandom(SMALL_FILE)
        for i in range(total // SMALL_FILE):
            sub = fixture / f"d{i // 256:03d}"
            sub.mkdir(exist_ok=True)
            # every file distinct, as in a real fixture (the object store keeps one copy per content)
            (sub / f"f{i:05d}.txt").write_bytes((f"{i:08d}\n".encode() + block)[:SMALL_FILE])
    prompts = [f"Turn {t}." for t in range(1, turns + 1)]
    expectations: list[dict[str, Any]] = [
        {"id": f"{v}-turn-{t}", "kind": "path", "variant": v, "path": f"turn-{t}.txt", "turn": t, "expect": "exists"}
        for v in ("baseline", "candidate") for t in range(1, turns + 1)
    ]
    expectations += [{"id": f"{v}-changed", "kind": "changed-paths", "variant": v, "expect": "equals",
                      "paths": [f"turn-{t}.txt" for t in range(1, turns + 1)]} for v in ("baseline", "candidate")]
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group = {
        "schema_version": 1, "kind": "group", "id": "growth", "type": "body",
        "input": {"turns": prompts} if turns > 1 else {"prompt": prompts[0]},
        "fixture": "fixture", "tools": ["read", "write", "edit"],
        "variants": {"baseline": variant, "candidate": variant},
        "expectations": expectations, "review_questions": [], "model": {"model": "scripted/growth"},
    }
    script = {"schema": "skill-eval-script/1", "turns": [
        {"steps": [{"tool_calls": [{"name": "write", "arguments": {"path": f"turn-{t}.txt", "content": f"turn {t}\n"}}]},
                   {"text": f"wrote turn-{t}.txt"}]}
        for t in range(1, turns + 1)
    ]}
    (dest / "groups" / "scripts").mkdir(parents=True)
    (dest / "groups" / "growth.json").write_text(json.dumps(group, indent=2), encoding="utf-8")
    (dest / "groups" / "scripts" / "growth.json").write_text(json.dumps(script), encoding="utf-8")
    suite = {"schema_version": 1, "kind": "suite", "id": "growth", "groups": ["groups/growth.json"]}
    (dest / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    (dest / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return dest


def make_memory_root(dest: Path, *, groups: int, calls: int, response_bytes: int) -> Path:
    """A definition root of *groups* small groups, each one turn of *calls* tool calls
    (one ``write`` per model request) and a final response of *response_bytes* bytes."""
    (dest / "skills" / "target").mkdir(parents=True)
    (dest / "skills" / "target" / "SKILL.md").write_text(
        "---\nname: target\ndescription: Target skill.\n---\n# target\n\nBody.\n", encoding="utf-8")
    (dest / "fixture").mkdir()
    (dest / "fixture" / "seed.txt").write_bytes(b"seed\n" * 205)
    (dest / "groups" / "scripts").mkdir(parents=True)
    word = "lorem ipsum dolor sit amet, consectetur adipiscing elit. "
    text = (word * (response_bytes // len(word) + 1))[:response_bytes] if response_bytes else "done"
    steps: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "write", "arguments": {"path": f"call-{c:03d}.txt", "content": f"call {c}\n"}}]}
        for c in range(1, calls + 1)]
    steps.append({"text": text})
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}
    (dest / "groups" / "scripts" / "memory.json").write_text(json.dumps(script), encoding="utf-8")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    refs = []
    for g in range(1, groups + 1):
        gid = f"memory-{g:04d}"
        group = {
            "schema_version": 1, "kind": "group", "id": gid, "type": "body", "input": {"prompt": "Go."},
            "fixture": "fixture", "tools": ["read", "write", "edit"],
            "variants": {"baseline": variant, "candidate": variant},
            "expectations": [{"id": f"{v}-wrote", "kind": "path", "variant": v, "path": "call-001.txt",
                              "expect": "exists" if calls else "absent"} for v in ("baseline", "candidate")],
            "review_questions": [], "model": {"model": "scripted/memory"},
        }
        (dest / "groups" / f"{gid}.json").write_text(json.dumps(group, indent=2), encoding="utf-8")
        refs.append(f"groups/{gid}.json")
    suite = {"schema_version": 1, "kind": "suite", "id": "memory", "groups": refs}
    (dest / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    (dest / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return dest


def tree_stats(root: Path) -> dict[str, int]:
    """Evidence on disk (each inode once, as du counts) and apparent (every path counted)."""
    seen: set[tuple[int, int]] = set()
    disk = apparent = files = links = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            files += 1
            apparent += st.st_size
            key = (st.st_dev, st.st_ino)
            if key in seen:
                links += 1
                continue
            seen.add(key)
            disk += st.st_blocks * 512
    return {"disk_bytes": disk, "apparent_bytes": apparent, "files": files, "shared_paths": links}


def timed(cmd: list[str], cwd: Path) -> dict[str, Any]:
    """Wall, CPU and peak RSS of one command that starts no children of its own."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "rss_kb": usage.ru_maxrss, "exit": proc.returncode,
            "error": err.decode("utf-8", "replace")[-300:] if proc.returncode not in (0, 1) else None}


_STORE_COPY = """
import sys, time
from pathlib import Path
from pytest_skill_eval.evidence import store
started = time.perf_counter()
store.copy_tree_atomic(Path(sys.argv[1]), Path(sys.argv[2]))
print(time.perf_counter() - started)
"""


def cp_r(fixture: Path, work: Path) -> dict[str, Any]:
    """``cp -r`` of the fixture and the evidence store's copy of it (fresh, nothing shared),
    best of 5, interleaved. The store copy runs in its own interpreter: a child forked from a process
    that held the fixture's bytes would report that process's peak RSS as its own."""
    n = sum(len(f) for _d, _s, f in os.walk(fixture))
    out: dict[str, Any] = {"files": n}
    best: dict[str, float] = {}
    for repeat in range(5):
        # interleaved, order alternating: write-back of one copy must not bill the other
        for label in (("cp_r", "store_copy") if repeat % 2 == 0 else ("store_copy", "cp_r")):
            dest = work / f"copy-{label}"
            subprocess.run(["sync"], check=False)
            if label == "cp_r":
                started = time.perf_counter()
                subprocess.run(["cp", "-r", str(fixture), str(dest)], check=True)
                wall = time.perf_counter() - started
            else:
                proc = subprocess.run([sys.executable, "-c", _STORE_COPY, str(fixture), str(dest)],
                                      check=True, capture_output=True, text=True)
                wall = float(proc.stdout.strip().splitlines()[-1])
            shutil.rmtree(dest)
            best[label] = min(best.get(label, wall), wall)
    for label, wall in best.items():
        out[f"{label}_s"] = round(wall, 4)
        out[f"{label}_per_file_us"] = round(wall / n * 1e6, 1)
    out["store_vs_cp"] = round(out["store_copy_s"] / out["cp_r_s"], 2)
    return out


def pi_floor(work: Path, turns: int, root: Path | None = None) -> dict[str, Any]:
    """The same pi invocations without the evaluator (1 MB fixture; pi never reads it), or
    those of the definition *root* given."""
    from pytest_skill_eval.scripted.server import ScriptedModelServer

    root = root or make_root(work / f"floor-{turns}", mb=1, shape="files", turns=turns)
    invocations, registrations, _recording = bench.record_invocations(root, work / f"record-{turns}")
    server = ScriptedModelServer().start()
    try:
        for name, script in registrations.items():
            server.register(name, Path(script))
        floor = bench.run_floor(invocations, bench.run_raw, server.base_url)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(work / f"record-{turns}", ignore_errors=True)
    return {"wall_s": round(floor.total, 3), "cpu_s": round(floor.cpu, 3), "invocations": len(invocations)}


def case(work: Path, *, mb: int, shape: str, turns: int, copies: bool) -> dict[str, Any]:
    label = f"{mb}MB-{shape}-{turns}t"
    bench.say(f"growth: {label}")
    root = make_root(work / label, mb=mb, shape=shape, turns=turns)
    row: dict[str, Any] = {"case": label, "fixture_mb": mb, "shape": shape, "turns": turns}
    if copies:
        row["copy"] = cp_r(root / "fixture", work)
    subprocess.run(["sync"], check=False)
    run = bench.run_pytest(root, ["--skill-eval", "suite.json", "-q", "-p", "no:cacheprovider"])
    assert run.result_dir is not None
    row.update(wall_s=round(run.wall, 3), cpu_s=round(run.cpu, 3), rss_kb=run.peak_kb("main"),
               pi_rss_kb=run.peak_kb("main", "children_kb"))
    row["evidence"] = tree_stats(run.result_dir)
    manifests = list(run.result_dir.rglob("*.manifest.json"))
    row["evidence"]["manifest_bytes"] = sum(p.stat().st_size for p in manifests)
    cli = [sys.executable, "-m", "pytest_skill_eval"]
    row["regrade"] = timed([*cli, "regrade", str(run.result_dir)], root)
    row["view"] = timed([*cli, "view", str(run.result_dir)], root)
    grade = json.loads(next(run.result_dir.rglob("grade.json")).read_text(encoding="utf-8"))
    row["grade_state"] = grade.get("state")
    row["expectations_failed"] = sum(1 for e in grade.get("expectations", []) if e.get("status") != "pass")
    shutil.rmtree(root, ignore_errors=True)
    return row


#: the memory cases: label -> (groups, tool calls, response bytes, with a pi floor)
MEMORY_CASES: dict[str, tuple[int, int, int, bool]] = {
    "groups-8": (8, 1, 0, True), "groups-32": (32, 1, 0, False), "groups-128": (128, 1, 0, False),
    "calls-1": (1, 1, 0, True), "calls-50": (1, 50, 0, True), "calls-200": (1, 200, 0, True),
    "response-2MB": (1, 0, 2 * 1024 * 1024, True),
}


def memory_case(work: Path, label: str, *, floor: bool) -> dict[str, Any]:
    """Groups, tool calls or response size: the pytest process's cost and the evidence."""
    groups, calls, response, with_floor = MEMORY_CASES[label]
    bench.say(f"growth: {label}")
    root = make_memory_root(work / label, groups=groups, calls=calls, response_bytes=response)
    row: dict[str, Any] = {"case": label, "groups": groups, "calls": calls, "response_bytes": response}
    run = bench.run_pytest(root, ["--skill-eval", "suite.json", "-q", "-p", "no:cacheprovider"])
    assert run.result_dir is not None
    row.update(wall_s=round(run.wall, 3), cpu_s=round(run.cpu, 3), rss_kb=run.peak_kb("main"),
               pi_rss_kb=run.peak_kb("main", "children_kb"), exit=run.returncode)
    row["evidence"] = tree_stats(run.result_dir)
    events = list(run.result_dir.rglob("events.jsonl"))
    row["evidence"]["events_bytes"] = sum(p.stat().st_size for p in events)
    if floor and with_floor:
        f = pi_floor(work, 1, root)
        row["floor"] = {**f, "per_run_s": round(f["wall_s"] / max(1, f["invocations"]), 3)}
    shutil.rmtree(root, ignore_errors=True)
    return row


def render_memory(rows: list[dict[str, Any]]) -> str:
    lines = ["case             wall     cpu   rss(pytest)  rss(pi)   evidence disk   events.jsonl   files   floor"]
    for row in rows:
        ev, f = row["evidence"], row.get("floor")
        lines.append(
            f"{row['case']:<14} {row['wall_s']:7.2f}s {row['cpu_s']:6.2f}s {row['rss_kb'] / 1024:8.1f} MB "
            f"{row['pi_rss_kb'] / 1024:6.0f} MB  {fmt_mb(ev['disk_bytes']):>12}  {fmt_mb(ev['events_bytes']):>11}  "
            f"{ev['files']:>6}   {f['wall_s'] if f else '-'}")
    return "\n".join(lines)


def fmt_mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def render(report: dict[str, Any]) -> str:
    lines = [f"package: {report['package']}",
             "case                 wall     cpu   rss(pytest)  evidence disk / apparent  files (shared)  "
             "regrade wall/rss   view wall/rss   floor"]
    for row in report["cases"]:
        ev = row["evidence"]
        floor = report["floor"].get(str(row["turns"]), {}).get("wall_s")
        lines.append(
            f"{row['case']:<18} {row['wall_s']:7.2f}s {row['cpu_s']:6.2f}s {row['rss_kb'] / 1024:8.0f} MB  "
            f"{fmt_mb(ev['disk_bytes']):>10} / {fmt_mb(ev['apparent_bytes']):>10}  {ev['files']:>6} ({ev['shared_paths']:>6})  "
            f"{row['regrade']['wall_s']:6.2f}s {row['regrade']['rss_kb'] / 1024:5.0f} MB  "
            f"{row['view']['wall_s']:6.2f}s {row['view']['rss_kb'] / 1024:5.0f} MB  "
            f"{floor if floor is not None else '-'}")
        if "copy" in row:
            c = row["copy"]
            lines.append(f"{'':18} copy of the fixture: cp -r {c['cp_r_s']:.3f}s ({c['cp_r_per_file_us']} us/file), "
                         f"store {c['store_copy_s']:.3f}s ({c['store_copy_per_file_us']} us/file), x{c['store_vs_cp']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1/10 MB and 1/5 turns only")
    parser.add_argument("--headline-only", action="store_true", help="20 turns x 100 MB of small files only")
    parser.add_argument("--no-headline", action="store_true", help="skip 20 turns x 100 MB")
    parser.add_argument("--no-floor", action="store_true", help="skip the pi floor")
    parser.add_argument("--copy-only", type=int, metavar="MB", default=None,
                        help="only the copy comparison, for a fixture of MB megabytes of small files")
    parser.add_argument("--memory-only", action="store_true", help="only groups, tool calls and response size")
    parser.add_argument("--memory-cases", default="groups,calls,response",
                        help="with --memory-only: which families (comma-separated)")
    parser.add_argument("--output", type=Path, default=None, help="JSON output (default results/growth.json)")
    args = parser.parse_args(argv)
    import pytest_skill_eval

    sizes, turn_counts = ([1, 10], [1, 5]) if args.quick else ([1, 10, 100], [1, 5, 20])
    plan: list[tuple[int, str, int]] = []
    if not args.headline_only:
        plan += [(mb, shape, 1) for shape in ("files", "one") for mb in sizes]
        plan += [(10, "files", t) for t in turn_counts if t != 1]
    if not args.quick and not args.no_headline:
        plan.append((100, "files", 20))
    work = Path(tempfile.mkdtemp(prefix="skill-eval-growth-"))
    if args.copy_only is not None:
        try:
            root = make_root(work / "copy", mb=args.copy_only, shape="files", turns=1)
            print(json.dumps(cp_r(root / "fixture", work)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    private_tmp = work / "tmp"
    private_tmp.mkdir()
    os.environ["TMPDIR"] = str(private_tmp)
    tempfile.tempdir = None
    if args.memory_only:
        families = set(args.memory_cases.split(","))
        rows: list[dict[str, Any]] = []
        try:
            for label in MEMORY_CASES:
                if label.split("-")[0] in families:
                    rows.append(memory_case(work, label, floor=not args.no_floor))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        memory = {"package": str(Path(pytest_skill_eval.__file__).parent), "load": os.getloadavg(),
                  "cases": rows}
        out = args.output or bench.RESULTS / "growth-memory.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(memory, indent=1) + "\n", encoding="utf-8")
        print(render_memory(rows))
        return 0
    report: dict[str, Any] = {"package": str(Path(pytest_skill_eval.__file__).parent), "cases": [], "floor": {}}
    try:
        for mb, shape, turns in plan:
            report["cases"].append(case(work, mb=mb, shape=shape, turns=turns, copies=turns == 1))
        if not args.no_floor:
            for turns in sorted({t for _m, _s, t in plan}):
                bench.say(f"growth: pi floor, {turns} turn(s)")
                report["floor"][str(turns)] = pi_floor(work, turns)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["self_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = args.output or bench.RESULTS / "growth.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
