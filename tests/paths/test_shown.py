"""shown: how messages name a path, relative to a root when it lies inside it, else as given."""

from __future__ import annotations

from pathlib import Path

from pytest_skill_eval.paths import shown


def test_a_path_is_named_relative_to_its_root_or_as_given() -> None:
    assert shown(Path("/suite/groups/a.json"), Path("/suite")) == "groups/a.json"
    assert shown(Path("/elsewhere/a.json"), Path("/suite")) == "/elsewhere/a.json"
    assert shown(Path("/suite/../x"), Path("/suite")) == "../x"  # lexical: nothing is resolved
    assert shown(Path("/suite/a.json"), None) == "/suite/a.json"
