"""The kernel alone holds every path-form attack of tests/reliability (issue 27).

The same group as ``tests/reliability/test_guard_path_forms.py`` (every path form pi's
read, write and edit accept, both variants), run with the path guard switched off by the
test-only hook and the confinement ``required``: nothing outside a variant's own roots is
read or written, and each refusal is the tool error pi reported (evidence, not a crash).

The one access the kernel cannot refuse is a read of the variant's own agent dir: pi itself
reads ``auth.json`` and ``models.json`` there, and the kernel cannot tell pi's read from the
model's. Writes there are refused (pi only makes its lock directories). The guard is the
line for that read (docs/security.md).
"""

from __future__ import annotations

import json

import pytest
from reliability.path_forms import assert_nothing_escaped, assert_variant_contained, plant

from pytest_skill_eval.host.confinement import GUARD_OFF_ENV, GUARD_OFF_VALUE

pytestmark = pytest.mark.pi

#: rows whose target is the variant's own private agent dir: pi's own files (see above)
AGENT_DIR_ROWS = {"agent-auth", "agent-auth-file-url"}
#: rows whose target exists outside every granted root: the kernel's own refusal is expected
KERNEL_REFUSED = {"absolute-outside", "etc-passwd", "proc-environ", "file-abs-outside", "symlink-out",
                  "file-etc-passwd", "file-proc-environ", "file-fixture-poison"}


def _refused(text: str) -> bool:
    return "EACCES" in text or "EPERM" in text or "ermission denied" in text


def _expected_ok(tool: str, label: str, allowed: set[str], own_counterpart: bool) -> bool:
    if label in AGENT_DIR_ROWS:
        return tool == "read"
    if label == "file-counterpart-workspace" and own_counterpart:
        return True  # the candidate's "counterpart" path is its own workspace
    return tool in allowed


def test_with_the_guard_off_the_kernel_contains_every_path_form(pytester: pytest.Pytester, pi_host: object,
                                                                tmp_path_factory: pytest.TempPathFactory,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    project = plant(pytester.path, tmp_path_factory.mktemp("outside"), tmp_path_factory.mktemp("scratch"), [])
    calls = project.calls
    monkeypatch.setenv("TMPDIR", str(project.scratch))
    monkeypatch.setenv(GUARD_OFF_ENV, GUARD_OFF_VALUE)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/forms.json", "-p", "no:cacheprovider",
                                           "--skill-eval-auth", "auth.json", "--skill-eval-confinement", "required")
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (project.root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    gdir = res / "groups" / "001-forms"
    for variant_name in ("baseline", "candidate"):
        vdir = gdir / variant_name
        run = json.loads((vdir / "run.json").read_text())
        assert run["state"] == "complete", "refused attempts are evidence, never crashes"
        assert run["confinement"]["mechanism"] == "landlock"
        assert run["confinement"]["guard"] == "off (test-only hook)", "the evidence says the kernel stood alone"
        assert not any("guard.mjs" in a for a in run["argv"])
        recorded = json.loads((vdir / "transcript.json").read_text())["turns"][0]["tool_calls"]
        assert len(recorded) == len(calls)
        own = variant_name == "candidate"
        # an escape must fail; an allowed call may fail only as it would anyway (a name the
        # fixture does not hold), never by a refusal
        wrong = [(f"{tool}:{label}", c["is_error"], c["result_text"][:120])
                 for (tool, label, allowed), c in zip(calls, recorded, strict=True)
                 if (not c["is_error"] and not _expected_ok(tool, label, allowed, own))
                 or (_expected_ok(tool, label, allowed, own) and _refused(c["result_text"]))]
        assert wrong == [], "failed exactly the calls that escape:\n" + "\n".join(map(str, wrong))
        assert not any(c["blocked"] for c in recorded), "no guard ran: every refusal is the kernel's"
        for (tool, label, _), c in zip(calls, recorded, strict=True):
            if label in KERNEL_REFUSED and tool != "edit":
                assert _refused(c["result_text"]), (tool, label, c["result_text"])
        assert_variant_contained(project, vdir)
    assert_nothing_escaped(project)
