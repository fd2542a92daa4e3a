"""The object store is evidence: a secret in a snapshotted input never reaches it, nor an auth file.

The subject's inputs (skills, context, fixture, scripts) are stored as it got them, except
that every inherited value and auth-file secret is replaced by the redaction marker, as in
every other evidence file; the auth file itself is never an input and is never stored.
Real pi, the scripted model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_skill_eval.redaction import MARKER

from .test_redaction import AUTH, SECRETS, SKILL, SPLIT, _group, _leaks, _setup, _write, scratch

pytestmark = pytest.mark.pi

__all__ = ["scratch"]  # the fixture, used by name


def test_a_secret_in_a_skill_file_is_stored_redacted_and_the_auth_file_never(pytester: pytest.Pytester,
                                                                             pi_host: object, scratch: Path) -> None:
    root = pytester.path
    group = _group("stores", inherit=sorted(SECRETS), prompts=["Go."], expectations=[])
    group["variants"]["candidate"] = dict(group["variants"]["candidate"], context=["context/notes.md"])
    script = {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "done"}]}]}
    _setup(root, group, script)
    _write(root / "skills" / "target" / "SKILL.md", SKILL + f"\nThe service token is {SPLIT}.\n")
    _write(root / "context" / "notes.md", f"Ask for {AUTH} never.\n")
    result = pytester.runpytest_subprocess("--skill-eval", "groups/stores.json", "-p", "no:cacheprovider",
                                           f"--skill-eval-auth={root / 'auth.json'}")
    assert result.ret == 0, result.stdout.str()
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    assert _leaks(res, [*SECRETS.values(), AUTH]) == []
    auth_bytes = (root / "auth.json").read_bytes()
    stored = [p.read_bytes() for p in (res / "objects").rglob("*") if p.is_file()]
    assert auth_bytes not in stored
    run = json.loads((res / "groups" / "001-stores" / "candidate" / "run.json").read_text())
    files = run["snapshot"]["files"]
    skill = files["resources/skills/0/target/SKILL.md"]["sha256"]
    skill_bytes = (res / "objects" / skill[:2] / skill).read_bytes().decode()
    assert f"The service token is {MARKER}." in skill_bytes
    context = files["resources/context/0/notes.md"]["sha256"]
    assert (res / "objects" / context[:2] / context).read_bytes().decode() == f"Ask for {MARKER} never.\n"
    assert run["redactions"]["snapshot/resources/skills/0/target/SKILL.md"] == 1
    assert run["redactions"]["snapshot/resources/context/0/notes.md"] == 1
    assert run["redactions"]["snapshot/workspace/config.txt"] == 1
    assert not any("auth" in rel for rel in files)
