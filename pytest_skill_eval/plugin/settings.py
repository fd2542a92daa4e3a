"""The run settings checked once: trials, the seed, the policy's thresholds, the provider timeout, jobs.

``--skill-eval-trials``, ``--skill-eval-seed``, ``--skill-eval-pass-rate``,
``--skill-eval-alpha``, ``--skill-eval-jobs``, ``--skill-eval-repeat-limit``, ``--skill-eval-stop``, and the
decision's ``--skill-eval-adjust``, ``--skill-eval-min-effect``, ``--skill-eval-require-power`` and
``--skill-eval-aa`` (and their ini settings), checked once, so a
bad value is a usage error naming the option or ini setting, what it expects and what it found.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

if TYPE_CHECKING:
    from pytest_skill_eval.decision import Adjustment, DecisionRules
    from pytest_skill_eval.host.confinement import Settings as ConfinementSettings

DEFAULT_PASS_RATE = 1.0
#: the default of ``--skill-eval-confinement`` when neither the option nor the ini gives one
CONFINEMENT_ENV = "SKILL_EVAL_CONFINEMENT"
DEFAULT_ALPHA = 0.05
DEFAULT_MIN_EFFECT = 0.2
#: ``--skill-eval-adjust``: the default first (as the decision core's ADJUSTMENTS)
ADJUST_CHOICES = ("holm", "bh", "none")


@dataclass(frozen=True, slots=True)
class RunSettings:
    count: int = 1
    #: the seed of the scripted stand-in's weighted choices (random unless given)
    seed: str = ""
    #: whether the user gave the seed (a given seed is always recorded in ``result.json``)
    seed_given: bool = False
    pass_rate: float = DEFAULT_PASS_RATE
    alpha: float = DEFAULT_ALPHA
    #: pi's provider request timeout (seconds; default: the launch layer's emergency ceiling)
    provider_timeout_s: float = field(default_factory=lambda: _default_provider_timeout())
    #: how often an infrastructure-failed variant is run again
    rerun_infra: int = 0
    #: how many groups one process runs at once (``--skill-eval-jobs``; 1: one after another)
    jobs: int = 1
    #: repetitions of the same tool call(s) that stop a run as no progress (0: never)
    repeat_limit: int = field(default_factory=lambda: _default_repeat_limit())
    #: the multiplicity adjustment across comparisons (``--skill-eval-adjust``)
    adjust: str = "holm"
    #: D, the rate difference power is computed for (``--skill-eval-min-effect``)
    min_effect: float = DEFAULT_MIN_EFFECT
    #: underpowered and indecisive decisions are errors (``--skill-eval-require-power``)
    require_power: bool = False
    #: both arms run the candidate: an A/A calibration run (``--skill-eval-aa``)
    aa: bool = False
    #: ``--skill-eval-stop``: off, curtail or sequential (with trials)
    stop: str = "off"

    @property
    def rules(self) -> DecisionRules:
        """The decision core's rules under these settings (docs/statistics.md)."""
        from pytest_skill_eval.decision import DecisionRules

        return DecisionRules(alpha=self.alpha, min_effect=self.min_effect, adjustment=cast("Adjustment", self.adjust))


def run_settings(config: pytest.Config, worker_seed: str | None = None) -> RunSettings:
    """The settings of this run; under xdist a worker takes the controller's seed."""
    count = int(_value(config, "skill_eval_trials", "--skill-eval-trials", _count) or 1)
    pass_rate = _value(config, "skill_eval_pass_rate", "--skill-eval-pass-rate", _unit)
    alpha = _value(config, "skill_eval_alpha", "--skill-eval-alpha", _alpha)
    given = config.getoption("skill_eval_seed")
    if given is not None and not given.strip():
        raise pytest.UsageError("--skill-eval-seed expects a non-empty seed, found an empty string")
    seed = worker_seed or given or secrets.token_hex(8)
    timeout = _value(config, "skill_eval_provider_timeout", "--skill-eval-provider-timeout", _seconds)
    reruns = int(_value(config, "skill_eval_rerun_infra", "--skill-eval-rerun-infra", _reruns) or 0)
    jobs = int(_value(config, "skill_eval_jobs", "--skill-eval-jobs", _jobs) or 1)
    repeats = _value(config, "skill_eval_repeat_limit", "--skill-eval-repeat-limit", _repeat_limit)
    models = config.getoption("skill_eval_models")
    if models:
        check_models_file(Path(models))
    adjust = _choice(config, "skill_eval_adjust", "--skill-eval-adjust", ADJUST_CHOICES)
    min_effect = _value(config, "skill_eval_min_effect", "--skill-eval-min-effect", _effect)
    return RunSettings(count, seed, given is not None, DEFAULT_PASS_RATE if pass_rate is None else pass_rate,
                       DEFAULT_ALPHA if alpha is None else alpha,
                       _default_provider_timeout() if timeout is None else timeout, reruns, jobs,
                       _default_repeat_limit() if repeats is None else int(repeats),
                       adjust or ADJUST_CHOICES[0], DEFAULT_MIN_EFFECT if min_effect is None else min_effect,
                       _flag(config, "skill_eval_require_power"), _flag(config, "skill_eval_aa"), stop_mode(config))


def _given(config: pytest.Config, ini: str, option: str) -> tuple[str | None, str]:
    """The option's value, else its ini setting's (``None``: neither), and where it came from."""
    raw = config.getoption(ini)
    if raw is not None:
        return str(raw), option
    return str(config.getini(ini) or "").strip() or None, ini


def _choice(config: pytest.Config, ini: str, option: str, choices: tuple[str, ...]) -> str | None:
    raw, source = _given(config, ini, option)
    if raw is None:
        return None
    if raw not in choices:
        raise pytest.UsageError(f"{source} expects one of {', '.join(choices)}, found {raw!r}")
    return str(raw)


def _flag(config: pytest.Config, ini: str) -> bool:
    """A store-true option, else its ini setting (a bool)."""
    given = config.getoption(ini)
    return bool(config.getini(ini)) if given is None else bool(given)


STOP_MODES = ("off", "curtail", "sequential")


def stop_mode(config: pytest.Config) -> str:
    """``--skill-eval-stop`` (pytest checks its choices), else the ini setting, else ``off``."""
    return _choice(config, "skill_eval_stop", "--skill-eval-stop", STOP_MODES) or "off"


def _value(config: pytest.Config, ini: str, option: str, parse: Callable[[str], float]) -> float | None:
    raw, source = _given(config, ini, option)
    if raw is None:
        return None
    try:
        return parse(raw)
    except ValueError as exc:
        raise pytest.UsageError(f"{source} expects {exc}, found {raw!r}") from None


def _default_provider_timeout() -> float:
    # imported here: the launch layer is not needed to start pytest
    from pytest_skill_eval.host.launch import DEFAULT_PROVIDER_TIMEOUT_S

    return DEFAULT_PROVIDER_TIMEOUT_S


def _default_repeat_limit() -> int:
    from pytest_skill_eval.host.repetition import DEFAULT_REPEAT_LIMIT

    return DEFAULT_REPEAT_LIMIT


def _repeat_limit(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) == 1:
        raise ValueError("a whole number of repetitions of at least 2, or 0 to switch the check off (e.g. 5)")
    return int(raw)


def _count(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise ValueError("a whole number of trials of at least 1")
    return int(raw)


def _jobs(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise ValueError("a whole number of groups to run at once of at least 1 (e.g. 4)")
    return int(raw)


def _reruns(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError("a whole number of reruns of at least 0")
    return int(raw)


def _number(raw: str, wanted: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(wanted) from None
    if not math.isfinite(value):
        raise ValueError(wanted)
    return value


def _seconds(raw: str) -> float:
    wanted = "a timeout in seconds above 0 (e.g. 3600)"
    value = _number(raw, wanted)
    if value <= 0:
        raise ValueError(wanted)
    return value


def _unit(raw: str) -> float:
    wanted = "a pass rate from 0 to 1 (e.g. 0.8)"
    value = _number(raw, wanted)
    if not 0.0 <= value <= 1.0:
        raise ValueError(wanted)
    return value


def _effect(raw: str) -> float:
    wanted = "a rate difference above 0 and at most 0.5 (e.g. 0.2)"
    value = _number(raw, wanted)
    if not 0.0 < value <= 0.5:
        raise ValueError(wanted)
    return value


def _alpha(raw: str) -> float:
    wanted = "a significance level above 0 and below 1 (e.g. 0.05)"
    value = _number(raw, wanted)
    if not 0.0 < value < 1.0:
        raise ValueError(wanted)
    return value


def confinement_settings(config: pytest.Config) -> ConfinementSettings:
    """``--skill-eval-confinement`` and ``--skill-eval-allow-read/-net`` (with their ini settings).

    Wider access comes only from here, the user's own command line and ini. The guard is
    left out only by the test harness's hook, read from this process's environment.
    """
    from pytest_skill_eval.host.confinement import (
        GUARD_OFF_ENV,
        GUARD_OFF_VALUE,
        MODES,
        Mode,
        Settings,
        parse_host_port,
    )

    mode = config.getoption("skill_eval_confinement")
    if mode is None:
        mode = str(config.getini("skill_eval_confinement") or "").strip() or None
        if mode is not None and mode not in MODES:
            raise pytest.UsageError(f"skill_eval_confinement expects one of {', '.join(MODES)}, found {mode!r}")
    if mode is None:
        # the environment may only tighten the default (CI sets required); off is the user's own word
        mode = os.environ.get(CONFINEMENT_ENV, "").strip() or "auto"
        if mode not in ("auto", "required"):
            raise pytest.UsageError(f"{CONFINEMENT_ENV} expects auto or required, found {mode!r} (switch the "
                                    "confinement off with --skill-eval-confinement off or the ini setting)")
    reads: list[str] = []
    for raw in [*config.getoption("skill_eval_allow_read"), *config.getini("skill_eval_allow_read")]:
        path = Path(raw).expanduser().resolve()
        if "\n" in str(path) or "\r" in str(path):
            raise pytest.UsageError(f"--skill-eval-allow-read expects a path without line breaks, found {str(raw)!r}")
        if not path.exists():
            raise pytest.UsageError(f"--skill-eval-allow-read expects an existing path, found {str(raw)!r} "
                                    f"({path} does not exist)")
        reads.append(str(path))
    nets: list[tuple[str, int]] = []
    for raw in [*config.getoption("skill_eval_allow_net"), *config.getini("skill_eval_allow_net")]:
        try:
            nets.append(parse_host_port(str(raw).strip()))
        except ValueError as exc:
            raise pytest.UsageError(f"--skill-eval-allow-net {exc}") from None
    guard = os.environ.get(GUARD_OFF_ENV) != GUARD_OFF_VALUE
    return Settings(cast(Mode, mode), tuple(reads), tuple(nets), guard)


def check_models_file(path: Path) -> None:
    """``--skill-eval-models FILE`` as pi's ``models.json``: a JSON object whose ``providers``
    (if any) is an object of provider objects, read once before anything runs; anything else
    is a usage error naming the file, where, what was expected and what was found."""
    from pytest_skill_eval.jsonbounds import loads
    from pytest_skill_eval.jsonpointer import child
    from pytest_skill_eval.schemas import describe

    where = f"--skill-eval-models {path}"
    try:
        data = loads(path.read_bytes())
    except OSError as exc:
        raise pytest.UsageError(f"{where}: cannot be read ({exc.strerror or exc}); give the path of pi's models.json") from None
    except UnicodeDecodeError as exc:
        raise pytest.UsageError(f"{where}: expected UTF-8 text, found byte 0x{exc.object[exc.start]:02x} at offset {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise pytest.UsageError(f"{where}: line {exc.lineno} column {exc.colno}: expected JSON, found a syntax error ({exc.msg})") from None
    except ValueError as exc:  # the bounds: too large, too deep
        raise pytest.UsageError(f"{where}: expected JSON pi's models.json can be, found {exc}") from None
    if not isinstance(data, dict):
        raise pytest.UsageError(f"{where}: expected a JSON object (pi's models.json), found {describe(data)}")
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise pytest.UsageError(f"{where}: /providers: expected an object of providers by name, found {describe(providers)}")
    for name, provider in providers.items():
        if not isinstance(provider, dict):
            pointer = child("/providers", name)
            raise pytest.UsageError(f"{where}: {pointer}: expected an object (a provider), found {describe(provider)}")
