"""``skill-eval rerun <result>``: the groups of a stored result, run again from its stored inputs.

It runs pytest in-process with the hidden ``--skill-eval-rerun`` option (see
:mod:`pytest_skill_eval.sources.stored`), passing the stored result's own settings and
variant selection; arguments after ``--`` follow them, so ``-n 2`` or ``-k <group-id>``
work as in a run, and a later option wins.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_skill_eval.evidence import layout, safe_io
from pytest_skill_eval.evidence.locate import resolve_result
from pytest_skill_eval.evidence.reader import read_optional
from pytest_skill_eval.evidence.records import ResultRecord, SelectionRecord


def rerun_arguments(result_dir: Path) -> list[str]:
    """pytest's arguments that run *result_dir*'s groups again with its settings."""
    argv = [f"--skill-eval-rerun={result_dir}", "-p", "no:cacheprovider", "-rN"]
    summary = read_optional(ResultRecord, result_dir / "result.json", result_dir)
    provenance = summary.provenance if isinstance(summary, ResultRecord) else None
    if provenance is not None:
        argv += ["--skill-eval-fail-on", provenance.fail_on, "--skill-eval-trials", str(provenance.trials),
                 "--skill-eval-seed", provenance.seed, "--skill-eval-pass-rate", repr(provenance.pass_rate),
                 "--skill-eval-alpha", repr(provenance.alpha),
                 "--skill-eval-provider-timeout", repr(provenance.provider_timeout_s),
                 "--skill-eval-rerun-infra", str(provenance.rerun_infra)]
        if provenance.stop is not None:
            argv += ["--skill-eval-stop", provenance.stop]
    selection = read_optional(SelectionRecord, result_dir / layout.SELECTION_FILE, result_dir)
    if isinstance(selection, SelectionRecord) and len(selection.variants) == 1:
        argv += ["--skill-eval-variant", selection.variants[0]]
    return argv


def rerun(target: str, cwd: Path, pytest_args: list[str]) -> int:
    """Run the stored result *target* again into a new result; pytest's exit status."""
    import pytest

    result_dir = resolve_result(target, cwd)
    if safe_io.entry_kind(result_dir / "result.json", result_dir) is None:
        print(f"skill-eval: warning: {result_dir} has no result.json: its settings are unknown, "
              "the rerun uses the defaults", file=sys.stderr)
    else:
        safe_io.read_json(result_dir / "result.json", result_dir)  # an unreadable summary is an error, not defaults
    return int(pytest.main([*rerun_arguments(result_dir), *pytest_args]))
