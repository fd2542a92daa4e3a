"""The package's public API: every name ``__all__`` lists resolves, and nothing else does."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pytest_skill_eval


@pytest.mark.parametrize("name", pytest_skill_eval.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(pytest_skill_eval, name)
    assert value is not None
    if name != "__version__":
        assert getattr(value, "__name__", name) == name


def test_all_lists_exactly_the_lazily_imported_names() -> None:
    assert sorted(pytest_skill_eval.__all__) == sorted(["__version__", *pytest_skill_eval._PUBLIC])


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'load_everything'"):
        _ = pytest_skill_eval.load_everything  # the package's module __getattr__ raises


def test_importing_the_package_loads_no_submodule() -> None:
    """Every pytest run imports the package through the entry point; it must stay cheap."""
    code = "import sys, pytest_skill_eval; print(sorted(m for m in sys.modules if m.startswith('pytest_skill_eval.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_python_dash_m_runs_the_console_script() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "usage: skill-eval" in done.stdout


def test_the_plugin_entry_point_leaves_running_and_grading_out_of_pytest_start_up() -> None:
    """Every pytest run where the plugin is installed imports its hooks: the engine, the
    evidence records, the expectation kinds and the launch layer wait until a group runs."""
    code = ("import sys, pytest_skill_eval.plugin.hooks; "
            "print(sorted(m for m in sys.modules if m.startswith(('pytest_skill_eval.engine', "
            "'pytest_skill_eval.evidence.records', 'pytest_skill_eval.evidence.reader', 'pytest_skill_eval.grading.kinds', "
            "'pytest_skill_eval.grading.aggregate', 'pytest_skill_eval.host.launch', 'jsonschema', 'jinja2'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
