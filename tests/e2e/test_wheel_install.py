"""The built wheel, installed into a fresh virtual environment, runs the quickstart.

An editable install hides packaging mistakes: package data left out of the wheel, or an
import order that only a regular install exposes (pytest warns that it cannot rewrite a
plugin package that ``skill-eval`` imported before starting pytest). This builds the wheel
with pip, installs it (with its dependencies) into a new venv, and runs ``skill-eval``
from there against a copy of the quickstart, with the real pi host from the shared cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "example_suites" / "quickstart"

pytestmark = pytest.mark.pi


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built from this checkout; returns its bin directory."""
    work = tmp_path_factory.mktemp("wheel")
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", REPO, cwd=work)
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("pytest_skill_eval-*.whl")
    made = run(sys.executable, "-m", "venv", work / "venv", cwd=work)
    assert made.returncode == 0, made.stderr
    bindir = work / "venv" / "bin"
    pip = run(bindir / "python", "-m", "pip", "install", "-q", wheel, cwd=work)
    assert pip.returncode == 0, pip.stderr
    return bindir


def clean_env(bindir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_wheel_installs_its_own_package_with_its_data(installed: Path, tmp_path: Path) -> None:
    where = run(installed / "python", "-c",
                "import importlib.resources as r, pytest_skill_eval as p; print(p.__file__); "
                "print(sorted(x.name for x in r.files('pytest_skill_eval').joinpath('host/extensions').iterdir()))",
                cwd=tmp_path, env=clean_env(installed))
    assert where.returncode == 0, where.stderr
    module, extensions = where.stdout.splitlines()
    assert Path(module).is_relative_to(installed.parent), module  # not this checkout
    assert extensions == str(["guard-paths.mjs", "guard.mjs", "observer.mjs", "tool-gate.mjs"])


def test_skill_eval_run_from_the_wheel_runs_the_quickstart_without_warnings(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, project, ignore=shutil.ignore_patterns(".skill-eval", ".pytest_cache", "__pycache__"))
    env = clean_env(installed)
    checked = run(installed / "skill-eval", "check", "suite.json", cwd=project, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run(installed / "skill-eval", "run", "suite.json", cwd=project, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "PytestAssertRewriteWarning" not in output
    assert "warnings summary" not in output and "warning" not in output.splitlines()[-1]
    assert "2 passed" in output.splitlines()[-1]
    assert "transitions: 2 fail-to-pass" in output
    (result_dir,) = (project / ".skill-eval" / "runs").glob("2*")
    assert (result_dir / "result.json").is_file()
    # the HTML report's templates are package data of the wheel
    report = run(installed / "skill-eval", "report", "latest", cwd=project, env=env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "fail-to-pass" in (result_dir / "report.html").read_text()
