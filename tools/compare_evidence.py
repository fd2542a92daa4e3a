"""Compare the evidence trees two versions of the plugin write for the example suites.

A refactoring must not change what a run stores. This script runs the example suites
(every group, through the real host, with the embedded scripted model; the trials suite with
4 trials of each variant) with the plugin
installed in a given virtual environment, normalises what legitimately differs between two
runs of the same code (result ids, times, durations, scratch directories, pi's session and
message ids, process ids, token counts (they follow the scratch paths' length), the
versions and random seed in ``result.json`` provenance, the order
of pi's events (parallel tool calls finish in any order), and pi's streaming
`message_update` records, which split text wherever the socket delivered it), and writes a digest: one entry per evidence file, with the
normalised text for JSON and text files and a hash for everything else, plus each suite's
exit status, its JUnit XML (times and token counts read as placeholders) and its ``-v``
terminal output (without pytest's header and the live progress lines; durations and token
counts read as placeholders): the status words, JUnit properties, detail lines and summary
rows are what a run reports too.

    python tools/compare_evidence.py snapshot --python .venv/bin/python before.json
    # ... change the code ...
    python tools/compare_evidence.py snapshot --python .venv/bin/python after.json
    python tools/compare_evidence.py diff before.json after.json

`diff` exits 0 when the digests agree and 1 with a unified diff of every file that differs.
`digest_result(result, roots, skip)` normalises one result directory the same way, any of
several roots read as `<root>`: tests/e2e/test_shard_merge.py compares a merged result of
shard runs in separate directories with a single run by it.
Two snapshots of the same commit agree (`selftest` checks that), so a difference is a
change in behaviour.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: The example suites and the extra command line each runs with: the trials suite runs a
#: smaller count than its pytest.ini asks for (its seed keeps the stand-in's choices fixed).
SUITES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("quickstart", ()),
    ("workflow", ()),
    ("trials", ("--skill-eval-trials", "4")),
)
#: What pytest reports besides the evidence tree: the JUnit XML's times and the summary's
#: duration and the result id differ between two runs of the same code.
JUNIT_TIME = re.compile(r'\b(time|timestamp|hostname)="[^"]*"')
#: token counts follow the scratch paths' length (see above): the usage properties' numbers
JUNIT_USAGE = re.compile(r'(name="skill_eval\.usage\.[^"]*" value=")\d+(")')
PYTEST_DURATION = re.compile(r"\bin \d+(?:\.\d+)?s\b")
#: pytest pads its section lines with ``=`` to the terminal width around a text whose
#: length (a duration) varies
PYTEST_RULE = re.compile(r"^=+ (.*?) =+$", re.MULTILINE)
#: numbers of three digits or more in the terminal output are token counts (positions and
#: trial counts are smaller)
PYTEST_COUNT = re.compile(r"\b\d{3,}\b")
#: pytest's header (versions, directories) and the live progress lines (their timing)
PYTEST_VOLATILE = ("platform ", "cachedir:", "rootdir:", "configfile:", "plugins:", "    skill-eval: ")

RESULT_ID = re.compile(r"\b\d{14}-[0-9a-f]{8}\b")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b")
#: The scripted model's response ids count the requests of one server, i.e. of one process.
SCRIPTED_RESPONSE_ID = re.compile(r"\b(chatcmpl-scripted-|msg_scripted_|resp_scripted_)\d+\b")
SCRATCH = re.compile(r"/[^\s\"']*?/skill-eval-[^/\s\"']+(?:/run-[^/\s\"']+)?")
#: Keys whose values are times or durations, wherever they occur.
TIME_KEYS = frozenset({
    "started_at", "ended_at", "turn_times", "duration", "duration_s", "elapsed", "timestamp",
    "created_at", "finished_at", "pid", "regraded_at", "durationMs", "ttftMs", "elapsedMs",
})
#: ``result.json`` provenance fields that name the machine's versions or a random seed.
PROVENANCE_VOLATILE = frozenset({"versions", "hosts", "seed"})
#: Numbers that look like epoch seconds or milliseconds (2020 .. 2040).
EPOCH_S = (1.58e9, 2.21e9)
EPOCH_MS = (1.58e12, 2.21e12)


def _normalise_text(text: str, root: str | tuple[str, ...]) -> str:
    # a merged result holds the groups of several shard runs, each with its own root
    for one in sorted((root,) if isinstance(root, str) else root, key=len, reverse=True):
        text = text.replace(one, "<root>")
    text = RESULT_ID.sub("<result-id>", text)
    text = UUID.sub("<uuid>", text)
    text = ISO_TIME.sub("<time>", text)
    return SCRATCH.sub("<scratch>", text)


def _counts(value: Any) -> Any:
    """Token counts depend on the length of the scratch paths in the prompt: keep the shape."""
    if isinstance(value, dict):
        return {key: _counts(item) for key, item in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "<count>"
    return value


def _normalise_json(value: Any, root: str | tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in TIME_KEYS:
                out[key] = "<time>"
            elif key == "usage":
                out[key] = _counts(item)
            elif key == "connect" and isinstance(item, list):
                # run.json confinement: the scripted stand-in listens on a new port every session
                out[key] = [{**_normalise_json(e, root), "port": "<port>"} if isinstance(e, dict) else e for e in item]
            elif key == "provenance" and isinstance(item, dict):
                out[key] = {k: "<provenance>" if k in PROVENANCE_VOLATILE else _normalise_json(v, root)
                            for k, v in item.items()}
            else:
                out[_normalise_text(str(key), root)] = _normalise_json(item, root)
        return out
    if isinstance(value, list):
        return [_normalise_json(item, root) for item in value]
    if isinstance(value, str):
        if value[:1] in ("[", "{"):  # JSON held as text, e.g. a provider context
            try:
                return _normalise_json(json.loads(value), root)
            except json.JSONDecodeError:
                pass
        return _normalise_text(value, root)
    return "<time>" if _looks_like_epoch(value) else value


def _looks_like_epoch(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return EPOCH_S[0] <= value <= EPOCH_S[1] or EPOCH_MS[0] <= value <= EPOCH_MS[1]


def _entry(path: Path, root: str | tuple[str, ...]) -> str:
    data = path.read_bytes()
    if path.suffix in {".json", ".jsonl"}:
        try:
            lines = data.decode().splitlines() if path.suffix == ".jsonl" else [data.decode()]
            records = [json.loads(line) for line in lines if line.strip()]
            # Streaming updates split the text wherever the socket delivered it, and carry
            # usage only once the final chunk arrived: compare the settled records only.
            records = [r for r in records if not (isinstance(r, dict) and r.get("type") == "message_update")]
            texts = [json.dumps(_normalise_json(record, root), indent=1) for record in records]
            if path.suffix == ".jsonl":
                # pi finishes parallel tool calls in whichever order they complete.
                texts.sort()
            return "\n".join(texts)
        except (UnicodeDecodeError, json.JSONDecodeError):
            pass
    try:
        return _normalise_text(data.decode(), root)
    except UnicodeDecodeError:
        return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_result(result: Path, roots: tuple[str, ...], skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """One result directory's files, normalised as `snapshot` does, any of *roots* read as `<root>`.

    For comparing a merged result (``skill-eval merge``) with a single run of the same suite:
    *skip* names result-relative files to leave out (``merge.json``, which only a merge writes).
    The scripted model's response ids are numbered per process (each shard, each xdist
    worker counts from 1), so they read as ``<prefix><n>`` here. ``result.json`` provenance
    ``argv`` and ``selection.workers`` name each run's own command line (a shard's has its
    ``--skill-eval-shard``, and ``-n`` when it had one), so they read as placeholders too.
    """
    digest: dict[str, str] = {}
    for path in sorted(result.rglob("*")):
        rel = path.relative_to(result).as_posix()
        if rel in skip:
            continue
        if path.is_symlink():
            digest[rel] = "symlink:" + str(path.readlink())
        elif path.is_file():
            digest[rel] = SCRIPTED_RESPONSE_ID.sub(r"\1<n>", _entry(path, roots))
            if rel == "result.json":
                digest[rel] = _without_command_line(digest[rel])
    return digest


def _without_command_line(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text
    provenance = data.get("provenance") if isinstance(data, dict) else None
    if isinstance(provenance, dict):
        provenance["argv"] = "<argv>"
        if isinstance(provenance.get("selection"), dict):
            provenance["selection"]["workers"] = "<workers>"
    return json.dumps(data, indent=2, ensure_ascii=False)


def _result_key(path: Path) -> str:
    return RESULT_ID.sub("<result-id>", path.as_posix())


def _install_paths(python: Path) -> list[tuple[str, str]]:
    """Where *python*'s plugin and environment live, read as placeholders: confinement puts
    the interpreter and the wrapper (``host/landlock.py``) on every run's argv, and two
    checkouts being compared live in different directories."""
    code = "import os, sys, pytest_skill_eval as p; print(os.path.dirname(p.__file__)); print(sys.prefix)"
    package, prefix = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                                     check=True).stdout.splitlines()
    return [(package, "<package>"), (prefix, "<venv>")]


def _placed(text: str, paths: list[tuple[str, str]]) -> str:
    for path, placeholder in paths:
        text = text.replace(path, placeholder)
    return text


def snapshot(python: Path, out: Path) -> None:
    digest: dict[str, str] = {}
    paths = _install_paths(python)
    with tempfile.TemporaryDirectory(prefix="compare-evidence-") as tmp:
        for name, extra in SUITES:
            suite = Path(tmp) / name
            shutil.copytree(REPO / "example_suites" / name, suite)
            junit = Path(tmp) / f"{name}-junit.xml"
            proc = subprocess.run(
                [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider", f"--junitxml={junit}", *extra],
                cwd=suite, capture_output=True, text=True, check=False,
            )
            digest[f"{name}/pytest-exit"] = str(proc.returncode)
            # the JUnit properties and the terminal summary rows are part of what a run reports
            xml = JUNIT_USAGE.sub(r"\1<count>\2", JUNIT_TIME.sub(r'\1="<time>"', junit.read_text(encoding="utf-8")))
            digest[f"{name}/junit.xml"] = _placed(_normalise_text(xml, str(suite)), paths)
            digest[f"{name}/pytest-stdout"] = _terminal(proc.stdout, str(suite), paths)
            runs = suite / ".skill-eval" / "runs"
            for path in sorted(runs.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    rel = f"{name}/{_result_key(path.relative_to(runs))}"
                    digest[rel] = _placed(_entry(path, str(suite)), paths)
                elif path.is_symlink():
                    digest[f"{name}/{_result_key(path.relative_to(runs))}"] = "symlink:" + str(path.readlink())
    out.write_text(json.dumps(digest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{out}: {len(digest)} entries")


def _terminal(stdout: str, root: str, paths: list[tuple[str, str]]) -> str:
    """pytest's ``-v`` output (status words, detail lines, the summary table) without what
    differs between two runs of the same code: its header, the live progress, durations,
    token counts."""
    lines = [line for line in stdout.splitlines() if not line.startswith(PYTEST_VOLATILE)]
    text = PYTEST_RULE.sub(r"== \1 ==", PYTEST_DURATION.sub("in <time>", _normalise_text("\n".join(lines), root)))
    return PYTEST_COUNT.sub("<n>", _placed(text, paths))


def diff(before: Path, after: Path) -> int:
    a = json.loads(before.read_text(encoding="utf-8"))
    b = json.loads(after.read_text(encoding="utf-8"))
    differing = 0
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            continue
        differing += 1
        if key not in a or key not in b:
            print(f"only in {'after' if key not in a else 'before'}: {key}")
            continue
        sys.stdout.writelines(difflib.unified_diff(
            (a[key] + "\n").splitlines(keepends=True), (b[key] + "\n").splitlines(keepends=True),
            f"before/{key}", f"after/{key}", n=2,
        ))
    print(f"{differing} of {len(set(a) | set(b))} entries differ")
    return 1 if differing else 0


def _interpreter(value: str) -> Path:
    """--python, made absolute (the suites run from other directories) but not resolved: a
    venv's ``python`` is a symlink whose target would lose the venv."""
    path = Path(value).absolute()
    if not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(f"{value}: no executable Python interpreter there "
                                         "(give a venv's bin/python, e.g. .venv/bin/python)")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="run the example suites and write a digest")
    snap.add_argument("out", type=Path)
    snap.add_argument("--python", type=_interpreter, default=REPO / ".venv" / "bin" / "python")
    cmp_ = sub.add_parser("diff", help="compare two digests")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    selftest = sub.add_parser("selftest", help="two snapshots of this checkout must agree")
    selftest.add_argument("--python", type=_interpreter, default=REPO / ".venv" / "bin" / "python")
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.python, args.out)
        return 0
    if args.command == "diff":
        return diff(args.before, args.after)
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "a.json", Path(tmp) / "b.json"
        snapshot(args.python, first)
        snapshot(args.python, second)
        return diff(first, second)


if __name__ == "__main__":
    raise SystemExit(main())
