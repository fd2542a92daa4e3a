"""Definition strings that reach the host's argv or environment: what ``execve`` can take (pure).

A string the kernel would refuse is a located load error here, so a definition that passes
``check`` never fails to launch for it (:mod:`pytest_skill_eval.execlimits` has the limits):

* ``runtime.environment.literal`` values become ``NAME=value`` environment strings: no NUL,
  each under ``MAX_ARG_STRLEN``, all of them under the most any kernel takes (this
  machine's own ``ARG_MAX`` is the pre-run check's business);
* ``model.model`` becomes ``--provider <provider> --model <id>``: no NUL, each part one
  argument; a ``scripted/<name>`` names ``scripts/<name>.json``, so ``<name>`` is a
  relative path that stays below ``scripts/``.

Names (environment names, tools) are the schema's patterns; declared paths are
:mod:`pytest_skill_eval.paths`' (no NUL there either); prompts are not limited: one that
cannot be an argument is sent over RPC.
"""

from __future__ import annotations

from typing import Any

from pytest_skill_eval.errors import Problem
from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, MAX_EXEC_TOTAL, exec_string_size
from pytest_skill_eval.jsonpointer import escape as _escape
from pytest_skill_eval.paths import check_relative
from pytest_skill_eval.schemas import describe as _describe

__all__ = ["launch_string_problems"]

_POINTER = 8
SCRIPTED = "scripted"


def launch_string_problems(doc: dict[str, Any]) -> list[Problem]:
    """Every definition string that no ``execve`` could pass to the host, located."""
    return _literal_problems(doc) + _model_problems(doc)


def _nul_at(text: str) -> str:
    return f"{_describe(text)} with a NUL at character {text.index(chr(0)) + 1}"


def _literal_problems(doc: dict[str, Any]) -> list[Problem]:
    runtime = doc.get("runtime")
    environment = runtime.get("environment") if isinstance(runtime, dict) else None
    literal = environment.get("literal") if isinstance(environment, dict) else None
    if not isinstance(literal, dict):
        return []
    problems: list[Problem] = []
    total = 0
    for name, value in literal.items():
        if not isinstance(name, str) or not isinstance(value, str):
            continue  # the schema reports it
        pointer = f"/runtime/environment/literal/{_escape(name)}"
        size = exec_string_size(f"{name}={value}")
        total += size + _POINTER
        if "\x00" in value:
            problems.append(Problem(pointer, "expected a value without NUL characters (the kernel ends every "
                                             f"environment string at its first NUL), found {_nul_at(value)}"))
        elif size > MAX_ARG_STRLEN:
            room = MAX_ARG_STRLEN - exec_string_size(f"{name}=")
            problems.append(Problem(pointer, f"expected a value of at most {room} bytes (the kernel takes at most "
                                             f"{MAX_ARG_STRLEN} bytes per environment string, NAME=value and its "
                                             f"closing NUL: Linux MAX_ARG_STRLEN), found {size - exec_string_size(name + '=')} "
                                             "bytes (UTF-8); put a long text in a fixture file instead"))
    if total > MAX_EXEC_TOTAL:
        problems.append(Problem("/runtime/environment/literal",
                                f"expected literal values of at most {MAX_EXEC_TOTAL} bytes in all (no Linux kernel "
                                "takes more argv and environment: three quarters of its 8 MiB stack limit), found "
                                f"{total} bytes; put long texts in fixture files instead"))
    return problems


def _model_problems(doc: dict[str, Any]) -> list[Problem]:
    model = doc.get("model")
    text = model.get("model") if isinstance(model, dict) else None
    if not isinstance(text, str) or "/" not in text:
        return []  # the schema reports it
    provider, name = text.split("/", 1)
    if "\x00" in text:
        return [Problem("/model/model", "expected a model name without NUL characters (pi gets the provider and "
                                        "the model id as command-line arguments, which end at their first NUL), "
                                        f"found {_nul_at(text)}")]
    longest = max(exec_string_size(provider), exec_string_size(name))
    if longest > MAX_ARG_STRLEN:
        return [Problem("/model/model", f"expected a provider and model id of at most {MAX_ARG_STRLEN - 1} bytes "
                                        "each (pi gets each as one command-line argument: Linux MAX_ARG_STRLEN), "
                                        f"found {_describe(text)} with a part of {longest - 1} bytes")]
    if provider == SCRIPTED and name:
        problem = check_relative(name)
        if problem is not None:
            return [Problem("/model/model", f'expected "scripted/<name>" with <name> a script name below '
                                            f'"scripts/" (it names scripts/<name>.json), found {_describe(text)}: '
                                            f"{problem}")]
    return []
