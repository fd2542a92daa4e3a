#!/usr/bin/env python3
"""Mutation score of the pure core, per module (dev-only; not run in CI).

    .venv/bin/python tools/mutation.py                  # every pure-core module
    .venv/bin/python tools/mutation.py policy protocol  # some of them
    .venv/bin/python tools/mutation.py --list           # the module names

Each module is mutated by mutmut in its own scratch copy of the work tree (tracked and
untracked-but-not-ignored files, so uncommitted work counts), against the fast, host-free
tests only (``-m "not pi"``), niced. The large modules in ``SAMPLED`` (``definitions/rules.py``,
``definitions/loading.py``, ``render/views.py``, ``render/html.py``, the stand-in's wire and reply
modules) are scored on a fixed sample of their mutants: ``SAMPLED[module]`` mutants, evenly spaced. The scores are printed as a Markdown table (the one in
docs/testing.md) and written as JSON to ``--output`` (default ``.mutation/scores.json``),
with the name of every surviving mutant; ``mutmut show NAME`` inside the kept scratch
copy (``--keep``) prints its diff.

mutmut is not a package dependency: when the running interpreter lacks it, the script
installs the pinned version into that interpreter's environment first (the one-liner is
``.venv/bin/pip install mutmut==3.8.1``).

Equivalent mutants (no test can tell them from the original, see docs/testing.md) are
listed in tools/mutation-equivalent.txt and reported apart from the survivors; the
"killed %" counts them neither as killed nor as survived. Their names are numbered per
function, so editing a function can renumber them: check the list when a score moves.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTMUT = "mutmut==3.8.1"
EQUIVALENT_FILE = ROOT / "tools" / "mutation-equivalent.txt"

#: The fast, host-free tests that exercise the pure core.
FAST_TESTS = [
    "tests/grading",
    "tests/policy",
    "tests/host/test_protocol.py",
    "tests/host/test_protocol_streams.py", "tests/host/test_provider_errors.py", "tests/host/test_models_used.py",
    "tests/definitions",
    "tests/paths",
    "tests/stats",
    "tests/commands/test_plan.py",
    "tests/api/test_codec.py", "tests/api/test_codec_fields.py", "tests/api/test_record_schemas.py", "tests/reuse",
    "tests/host/test_repetition.py", "tests/host/test_repetition_record.py",
    "tests/views", "tests/report", "tests/scripted",
]
#: Fuzz tests that take seconds each: they only look for crashes, and every mutant they
#: reach would pay for them. They stay in the normal suite.
SLOW_FUZZ = [
    "tests/definitions/test_hostile_definitions.py::test_hostile_definitions_end_in_a_located_error_or_a_valid_load",
    "tests/definitions/test_definition_properties.py::test_mutated_examples_only_ever_raise_definition_error",
    "tests/definitions/test_definition_properties.py::test_random_json_only_ever_raises_definition_error",
    "tests/grading/test_group.py::test_garbage_expectations_never_raise",
    "tests/definitions/test_hostile_definitions.py::test_collection_of_a_directory_skips_a_fifo_without_hanging",
]
#: Simulations of the decision core (type-I error, planned detection...) that take seconds
#: each; fast tests against scipy or brute-force enumeration pin the same logic.
SLOW_SIMULATIONS = [f"tests/stats/{t}" for t in (
    "test_type_one.py", "test_planned_detection.py", "test_power.py::test_fisher_power_agrees_with_a_seeded_simulation",
    "test_sequential.py::test_exact_type_one_error", "test_sequential.py::test_simulated_type_one_error",
    "test_decision_cases.py::test_identical_arms_on_the_stochastic_stand_in",
)] + [f"tests/commands/test_plan.py::test_{t}" for t in (  # subprocesses: they run the installed package, not the mutant
    "cli_without", "unreadable_stored", "bad_options", "definition_that_does_not_load")]
#: The report's browser tests: they need chromium and take seconds each; the fast tests of
#: tests/report pin the same page text.
BROWSER = [f"tests/report/test_html.py::test_{t}" for t in (
    "hostile_result_runs_nothing_in_a_browser", "filters_and_links_in_a_browser",
    "large_result_builds_group_details_only_when_opened", "partial_evidence_renders")]
PYTEST_ARGS = ["-p", "no:cacheprovider", "-p", "no:xdist", "-m", "not pi", "-q",
               *(arg for test in SLOW_FUZZ + SLOW_SIMULATIONS + BROWSER for arg in ("--deselect", test))]

MODULES: dict[str, str] = {
    "group": "pytest_skill_eval/grading/group.py",
    "comparisons": "pytest_skill_eval/grading/comparisons.py",
    "shapes": "pytest_skill_eval/grading/shapes.py",
    "jsonvalue": "pytest_skill_eval/grading/jsonvalue.py",
    "kinds": "pytest_skill_eval/grading/kinds.py",
    "turns": "pytest_skill_eval/grading/turns.py",
    "workspace": "pytest_skill_eval/grading/workspace.py",
    "judging": "pytest_skill_eval/grading/judging.py",
    "results": "pytest_skill_eval/grading/results.py",
    "paths": "pytest_skill_eval/paths.py",
    "policy": "pytest_skill_eval/policy.py",
    "policy_terms": "pytest_skill_eval/policy_terms.py",
    "trial_policy": "pytest_skill_eval/trial_policy.py",
    "summary_table": "pytest_skill_eval/summary_table.py",
    "protocol": "pytest_skill_eval/host/protocol.py",
    "document": "pytest_skill_eval/definitions/document.py",
    "rules": "pytest_skill_eval/definitions/rules.py",
    "loading": "pytest_skill_eval/definitions/loading.py",
    **{m: f"pytest_skill_eval/decision/{m}.py" for m in (
        "exact", "multiplicity", "suite", "stopping", "sequential", "power", "planning", "calibration")},
    "decision_cases": "pytest_skill_eval/decision_cases.py",
    "codec": "pytest_skill_eval/codec.py", "aggregate": "pytest_skill_eval/grading/aggregate.py",
    "checks": "pytest_skill_eval/grading/checks.py", "reuse": "pytest_skill_eval/reuse.py",
    "repetition": "pytest_skill_eval/host/repetition.py",
    "sharding": "pytest_skill_eval/definitions/sharding.py",
    "launchable": "pytest_skill_eval/definitions/launchable.py",
    "typehints": "pytest_skill_eval/typehints.py",
    **{m: f"pytest_skill_eval/render/{m}.py" for m in ("views", "diffs", "regrade", "html")},
    **{m: f"pytest_skill_eval/scripted/{m}.py" for m in (
        "pacing", "wires", "sse", "chat_completions", "conversation", "replies")},
}
#: Modules scored on this many evenly spaced mutants only (a fixed, reproducible sample).
SAMPLED: dict[str, int] = {"rules": 60, "loading": 40, "views": 215, "replies": 25, "html": 40,
                          "chat_completions": 30, "conversation": 30}

_RESULT_LINE = re.compile(r"^\s+(\S+__mutmut_\d+): (.+)$")


@dataclass
class Score:
    module: str
    path: str
    total: int = 0
    statuses: dict[str, list[str]] = field(default_factory=dict)
    equivalent: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return len(self.statuses.get(status, []))

    @property
    def killed(self) -> int:
        return self.count("killed") + self.count("timeout")

    @property
    def survived(self) -> list[str]:
        return [m for m in self.statuses.get("survived", []) if m not in self.equivalent]

    @property
    def checked(self) -> int:
        # "no tests" and "not checked" (mutmut stops early when no selected test reaches
        # any mutant) are mutants no test kills: they count against the score.
        return (self.killed + len(self.survived) + self.count("suspicious") + self.count("no tests")
                + self.count("not checked"))

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.checked if self.checked else 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "module": self.module,
            "path": self.path,
            "mutants": self.total,
            "checked": self.checked,
            "killed": self.killed,
            "killed_percent": round(self.percent, 1),
            "equivalent": self.equivalent,
            "survived": self.survived,
            "no_tests": self.statuses.get("no tests", []) + self.statuses.get("not checked", []),
            "other": {k: v for k, v in self.statuses.items()
                      if k not in ("killed", "timeout", "survived", "no tests", "not checked")},
        }


def ensure_mutmut() -> None:
    if importlib.util.find_spec("mutmut") is None:
        print(f"mutation: installing {MUTMUT} into {sys.prefix}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", MUTMUT], check=True)


def equivalent_mutants() -> set[str]:
    if not EQUIVALENT_FILE.exists():
        return set()
    names = set()
    for line in EQUIVALENT_FILE.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.add(name)
    return names


def scratch_copy(dest: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def configure(copy: Path, source: str) -> None:
    tests = [t for t in FAST_TESTS if (copy / t).exists()]
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + "\n[tool.mutmut]\n"
        + 'source_paths = ["pytest_skill_eval/"]\n'
        + f"only_mutate = {toml_list([source])}\n"
        + f"pytest_add_cli_args = {toml_list(PYTEST_ARGS)}\n"
        + f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        + 'also_copy = ["conftest.py", "docs", "example_suites"]\n'
        + "use_git_change_detection = false\n"
    )


def mutmut(copy: Path, *args: str, log: Path) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with log.open("a") as out:
        proc = subprocess.run(
            ["nice", "-n", "19", sys.executable, "-m", "mutmut", *args],
            cwd=copy, env=env, stdout=subprocess.PIPE, stderr=out, text=True, check=False,
        )
        out.write(proc.stdout)
    return proc.stdout


def results(copy: Path, log: Path) -> dict[str, str]:
    found = {}
    for line in mutmut(copy, "results", "--all", "true", log=log).splitlines():
        if m := _RESULT_LINE.match(line):
            found[m.group(1)] = m.group(2).strip()
    return found


def score_module(module: str, jobs: int, keep: bool, equivalent: set[str]) -> Score:
    source = MODULES[module]
    copy = Path(tempfile.mkdtemp(prefix=f"mutation-{module}-"))
    log = copy / "mutation.log"
    try:
        scratch_copy(copy)
        configure(copy, source)
        sample = SAMPLED.get(module)
        if sample:
            # Generate the mutants and the test map without running any mutant...
            mutmut(copy, "run", "--max-children", str(jobs), "no-such-mutant-*", log=log)
            names = sorted(results(copy, log))
            step = max(1, len(names) // sample)
            chosen = names[::step][:sample]
            # ...then run the fixed sample only.
            mutmut(copy, "run", "--max-children", str(jobs), *chosen, log=log)
            found = {n: s for n, s in results(copy, log).items() if n in chosen}
            total = len(names)
        else:
            mutmut(copy, "run", "--max-children", str(jobs), log=log)
            found = results(copy, log)
            total = len(found)
        score = Score(module, source, total=total)
        for name, status in sorted(found.items()):
            if status == "survived" and name in equivalent:
                score.equivalent.append(name)
            score.statuses.setdefault(status, []).append(name)
        if not found:
            print(f"mutation: {module}: mutmut produced no results; see {log}", file=sys.stderr)
            keep = True
        return score
    finally:
        if keep:
            print(f"mutation: {module}: scratch copy kept at {copy}", file=sys.stderr)
        else:
            shutil.rmtree(copy, ignore_errors=True)


def table(scores: list[Score]) -> str:
    lines = [
        "| module | mutants | checked | killed | equivalent | survived | killed % |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in scores:
        checked = f"{s.checked} (sample)" if s.module in SAMPLED else str(s.checked)
        lines.append(f"| {s.path} | {s.total} | {checked} | {s.killed} | {len(s.equivalent)} | "
                     f"{len(s.survived)} | {s.percent:.1f} % |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"modules to score (default: all): {', '.join(MODULES)}")
    parser.add_argument("--list", action="store_true", help="list the module names and exit")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--output", type=Path, default=ROOT / ".mutation" / "scores.json")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies (for mutmut show)")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(f"{k}\t{v}" for k, v in MODULES.items()))
        return 0
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}")
    ensure_mutmut()
    equivalent = equivalent_mutants()
    scores = []
    for module in args.modules or list(MODULES):
        print(f"mutation: {module} ({MODULES[module]}) ...", flush=True)
        score = score_module(module, args.jobs, args.keep, equivalent)
        print(f"mutation: {module}: {score.killed}/{score.checked} killed ({score.percent:.1f} %), "
              f"{len(score.equivalent)} equivalent, survivors: {' '.join(score.survived) or 'none'}", flush=True)
        scores.append(score)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(args.output.read_text()) if args.output.exists() else {}
    previous.update({s.module: s.as_json() for s in scores})
    args.output.write_text(json.dumps(previous, indent=2) + "\n")
    print()
    print(table(scores))
    print(f"\nwritten: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
