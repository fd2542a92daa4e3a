"""A separate-argument path option must not move pytest's rootdir or change node ids.

pytest picks its rootdir from the free arguments that exist as paths before any plugin
has added its options, so ``--skill-eval-models ../elsewhere/models.json`` counts
``../elsewhere/models.json`` as a test path there. The plugin cannot change that choice;
when the value would change it, the run stops with an error that says to use ``=``.
Nothing here starts a host (``--collect-only``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_collection import QUICKSTART_IDS, collected


def rootdir(result: pytest.RunResult) -> str:
    return next(line.split("rootdir: ", 1)[1].split(",")[0] for line in result.outlines if line.startswith("rootdir: "))


@pytest.fixture
def elsewhere(project: Path) -> Path:
    outside = project.parent / f"{project.name}-elsewhere"
    outside.mkdir()
    (outside / "models.json").write_text('{"providers": {}}\n')
    (outside / "auth.json").write_text("{}\n")
    return outside


@pytest.mark.parametrize("option", ["--skill-eval-models", "--skill-eval-auth"])
def test_equals_form_keeps_rootdir_and_node_ids(project: Path, pytester: pytest.Pytester, elsewhere: Path,
                                                option: str) -> None:
    name = "models.json" if option.endswith("models") else "auth.json"
    result = pytester.runpytest("--skill-eval", "suite.json", f"{option}={elsewhere / name}", "--collect-only")
    assert result.ret == pytest.ExitCode.OK
    assert rootdir(result) == str(project)
    quiet = pytester.runpytest("--skill-eval", "suite.json", f"{option}={elsewhere / name}", "--collect-only", "-q")
    assert collected(quiet) == QUICKSTART_IDS


@pytest.mark.parametrize("option", ["--skill-eval-models", "--skill-eval-auth"])
@pytest.mark.parametrize("first", [True, False], ids=["option-first", "option-last"])
def test_separate_form_outside_the_project_never_moves_rootdir(project: Path, pytester: pytest.Pytester,
                                                               elsewhere: Path, option: str, first: bool) -> None:
    name = "models.json" if option.endswith("models") else "auth.json"
    value = f"../{elsewhere.name}/{name}"
    args = [option, value, "--skill-eval", "suite.json"] if first else ["--skill-eval", "suite.json", option, value]
    result = pytester.runpytest(*args, "--collect-only", "-q")
    ids = collected(result)
    if result.ret == pytest.ExitCode.OK:
        assert ids == QUICKSTART_IDS
    else:
        assert result.ret == pytest.ExitCode.USAGE_ERROR and ids == []
        err = result.stderr.str()
        assert f"{option} {value}" in err
        assert f"{option}={value}" in err  # says how to write it instead
        assert "rootdir" in err


def test_separate_form_inside_the_project_still_works(project: Path, pytester: pytest.Pytester) -> None:
    (project / "models.json").write_text('{"providers": {}}\n')
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-models", "models.json", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    assert collected(result) == QUICKSTART_IDS
    sub = project / "secrets"
    sub.mkdir()
    (sub / "auth.json").write_text("{}\n")
    result = pytester.runpytest("--skill-eval-auth", "secrets/auth.json", "--skill-eval", "suite.json", "--collect-only")
    assert result.ret == pytest.ExitCode.OK and rootdir(result) == str(project)


def test_separate_form_with_an_ini_elsewhere_is_refused(project: Path, pytester: pytest.Pytester,
                                                       elsewhere: Path) -> None:
    # the first path argument's ini wins pytest's search: here the option's directory
    pytester.makeini("[pytest]\n")
    (elsewhere / "pytest.ini").write_text("[pytest]\n")
    result = pytester.runpytest("--skill-eval-models", str(elsewhere / "models.json"), "--skill-eval", "suite.json",
                                "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--skill-eval-models={elsewhere / 'models.json'}" in result.stderr.str()
