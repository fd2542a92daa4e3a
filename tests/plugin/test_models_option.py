"""``--skill-eval-models FILE`` is read once, before anything runs: a file that is not pi's
``models.json`` shape is a usage error naming the file, where, what was expected and what was
found (it was a traceback from the launch layer, once per variant). Nothing here starts a host.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CASES: dict[str, tuple[str | bytes, str]] = {
    "syntax": ('{"providers": {', "line 1 column 16: expected JSON, found a syntax error (Expecting property name enclosed in double quotes)"),
    "not-an-object": ('["providers"]', "expected a JSON object (pi's models.json), found an array"),
    "providers-not-an-object": ('{"providers": []}', "/providers: expected an object of providers by name, found an empty array"),
    "provider-not-an-object": ('{"providers": {"local": 3}}', "/providers/local: expected an object (a provider), found 3"),
    "too-deep": ("[" * 300 + "]" * 300, "nesting too deep to read (more than 200 levels)"),
    "not-utf-8": (b'{"providers": {"\xff": {}}}', "expected UTF-8 text"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_models_file_is_a_located_usage_error(project: Path, pytester: pytest.Pytester, case: str) -> None:
    text, expected = CASES[case]
    models = project / "models.json"
    models.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = pytester.runpytest("--skill-eval", "suite.json", f"--skill-eval-models={models}", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "Traceback" not in err and "INTERNALERROR" not in err
    assert f"--skill-eval-models {models}" in err and expected in err, err
    assert not (project / ".skill-eval" / "runs").exists() or not any((project / ".skill-eval" / "runs").iterdir())


def test_a_missing_models_file_is_a_usage_error(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", f"--skill-eval-models={project / 'nope.json'}",
                                "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--skill-eval-models" in result.stderr.str() and "cannot be read" in result.stderr.str()


def test_a_good_models_file_collects(project: Path, pytester: pytest.Pytester) -> None:
    (project / "models.json").write_text('{"providers": {"local": {"baseUrl": "http://127.0.0.1:9/v1", "models": []}}}')
    result = pytester.runpytest("--skill-eval", "suite.json", f"--skill-eval-models={project / 'models.json'}",
                                "--collect-only")
    assert result.ret == pytest.ExitCode.OK
