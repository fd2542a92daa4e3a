"""The built wheel, installed into a fresh virtual environment, runs init and the quickstart.

An editable install hides packaging mistakes: package data left out of the wheel, or an
import order that only a regular install exposes (pytest warns that it cannot rewrite a
plugin package that ``skill-eval`` imported before starting pytest). This builds the wheel
with the README's own install commands ("Using it on your skill"), installs it (with its
dependencies, not editable) into a new venv, and runs ``skill-eval`` from there: ``init`` on
a real skill in a fresh Git repository, the suite it writes, and a copy of the quickstart,
with the real pi host from the shared cache. CI runs this file, so a release can never lose
its schemas, templates, host extensions or pi's lock file.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "example_suites" / "quickstart"
#: how the README names the user's checkout in its install commands
CHECKOUT = "./pytest-skill-eval"
#: a real public skill (anthropics/skills, Apache-2.0; see its NOTICE.md)
BRAND = REPO / "tests" / "commands" / "skills" / "brand-guidelines"


def skill_repo(root: Path) -> Path:
    """A fresh Git repository whose only commit holds the real skill at skills/brand-guidelines."""
    shutil.copytree(BRAND, root / "skills" / "brand-guidelines")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Add the skill"]):
        subprocess.run(["git", "-c", "user.name=Skill Author", "-c", "user.email=author@example.invalid",
                        "-c", "init.defaultBranch=main", *args], cwd=root, check=True, capture_output=True)
    return root

pytestmark = pytest.mark.pi


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def readme_install_commands() -> list[str]:
    """The ``pip`` lines of the README's install block (in "Using it on your skill"), comments dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Using it on your skill", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    commands = [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()
                if line.startswith("pip ")]
    return commands


def test_the_readme_installs_from_a_checkout_not_from_the_index() -> None:
    # the package is not on the index: "pip install pytest-skill-eval" fails for a new user
    commands = readme_install_commands()
    assert commands, "the README's install block lost its pip commands"
    assert not any(shlex.split(c)[-1] == "pytest-skill-eval" for c in commands), commands
    assert any(CHECKOUT in c for c in commands), commands


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built from this checkout with the README's commands; its bin directory."""
    work = tmp_path_factory.mktemp("wheel")
    made = run(sys.executable, "-m", "venv", work / "venv", cwd=work)
    assert made.returncode == 0, made.stderr
    bindir = work / "venv" / "bin"
    for command in readme_install_commands():
        # as the README says, with this checkout for the user's and the fresh venv's pip
        line = command.replace(CHECKOUT, shlex.quote(str(REPO)))
        line = re.sub(r"^pip ", f"{shlex.quote(str(bindir / 'python'))} -m pip -q ", line)
        done = run("bash", "-c", line, cwd=work)
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    (wheel,) = (work / "dist").glob("pytest_skill_eval-*.whl")
    assert wheel.is_file()
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


def test_the_wheel_holds_every_data_file_of_the_package(installed: Path, tmp_path: Path) -> None:
    # every non-Python file of the package in this checkout (schemas, templates, pi's pinned
    # lock file, host extensions) is in the installed package, byte for byte
    package = REPO / "pytest_skill_eval"
    data = sorted(p.relative_to(package).as_posix() for p in package.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
    assert {"host/package-lock.json", "host/package.json", "schemas/suite.schema.json",
            "render/templates/report.html.j2", "py.typed"} <= set(data)
    where = run(installed / "python", "-c", "import pytest_skill_eval as p; print(p.__file__)",
                cwd=tmp_path, env=clean_env(installed))
    assert where.returncode == 0, where.stderr
    installed_package = Path(where.stdout.strip()).parent
    missing = [rel for rel in data if not (installed_package / rel).is_file()]
    assert missing == []
    assert [rel for rel in data if (installed_package / rel).read_bytes() != (package / rel).read_bytes()] == []


def test_init_from_the_wheel_writes_a_suite_that_runs(installed: Path, tmp_path: Path) -> None:
    # a new user's first hour: a real skill in a fresh repository, init, check, the suite
    repo = skill_repo(tmp_path / "my-skills")
    env = clean_env(installed)
    init = run(installed / "skill-eval", "init", "skills/brand-guidelines", cwd=repo, env=env)
    assert init.returncode == 0, init.stdout + init.stderr
    suite = ".skill-eval/brand-guidelines/suite.json"
    assert f"pytest --skill-eval {suite}" in init.stdout
    checked = run(installed / "skill-eval", "check", suite, cwd=repo, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run(installed / "pytest", "-p", "no:cacheprovider", "--skill-eval", suite, cwd=repo, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "2 passed" in output.splitlines()[-1], output
    assert "PytestAssertRewriteWarning" not in output


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
