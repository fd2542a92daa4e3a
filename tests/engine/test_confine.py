"""Whether a variant runs confined, partially confined, or (``required``) not at all (issue 27).

No kernel here: engine/confine.py decides for a given Landlock ABI and network-namespace gap,
over the roots tests/isolation/test_confinement_rules.py derives the policy from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from isolation.test_confinement_rules import MODEL, ROOTS

from pytest_skill_eval.engine.confine import confine_variant, install_roots, warn_once
from pytest_skill_eval.errors import HostError
from pytest_skill_eval.host.confinement import Settings
from pytest_skill_eval.host.install import HostInstallation


def test_required_refuses_a_kernel_without_landlock_and_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="required.*cannot enforce.*filesystem rules.*Landlock"):
        confine_variant(Settings("required"), ROOTS, MODEL, tmp_path, abi=0, netns_gap="")
    with pytest.raises(HostError, match="required.*cannot enforce.*network namespace \\(no userns\\).*network rules"):
        confine_variant(Settings("required"), ROOTS, MODEL, tmp_path, abi=3, netns_gap="no userns")


def test_required_runs_where_only_scoping_is_missing_and_records_the_gap(tmp_path: Path) -> None:
    warn_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="partial.*signal and abstract-socket scoping"):
        confined = confine_variant(Settings("required"), ROOTS, MODEL, tmp_path / "baseline", abi=5, netns_gap="")
    assert confined.wrapper and confined.record["mechanism"] == "landlock"
    assert confined.record["not_enforced"][0].startswith("signal and abstract-socket scoping")


def test_auto_without_landlock_runs_unconfined_and_warns_once(tmp_path: Path) -> None:
    warn_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="no kernel confinement") as caught:
        first = confine_variant(Settings("auto"), ROOTS, MODEL, tmp_path, abi=0)
        confine_variant(Settings("auto"), ROOTS, MODEL, tmp_path, abi=0)
    assert len([w for w in caught if "no kernel confinement" in str(w.message)]) == 1
    assert first.wrapper == () and first.record["mechanism"] == "none"
    assert "Landlock" in first.record["reason"]


def test_off_records_that_it_was_off_and_the_guard_state(tmp_path: Path) -> None:
    off = confine_variant(Settings("off", guard=False), ROOTS, MODEL, tmp_path, abi=7)
    assert off.wrapper == ()
    assert off.record == {"mechanism": "none", "mode": "off", "guard": "off (test-only hook)",
                          "reason": "switched off (--skill-eval-confinement off)"}


def test_install_roots_cover_the_npm_prefix_and_node(tmp_path: Path) -> None:
    prefix = tmp_path / "pi-1.6.0"
    cli = prefix / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    node = tmp_path / "elsewhere" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("")
    roots = install_roots(HostInstallation(node=node, cli=cli, version="1.6.0", managed=True))
    assert roots == (str(prefix.resolve()), str(node.parent.resolve()))
