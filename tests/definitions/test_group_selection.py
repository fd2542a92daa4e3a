"""Group and variant selection helpers, and unique group ids across a suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_skill_eval.definitions.loading import load_group, load_suite, load_suite_groups
from pytest_skill_eval.definitions.model import Suite
from pytest_skill_eval.definitions.selection import check_group_selection, select_group, select_variants
from pytest_skill_eval.errors import DefinitionError, SelectionError, SkillEvalError

from .support import spec_doc, write_json, write_suite_tree


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    loaded, _ = load_suite_groups(load_suite(write_suite_tree(tmp_path), tmp_path), tmp_path)
    return loaded


@pytest.mark.parametrize(("selector", "ref"), [("1", "groups/natural-activation.json"), ("2", "groups/body-behavior.json")])
def test_select_by_one_based_position(suite: Suite, selector: str, ref: str) -> None:
    assert select_group(suite, selector).ref == ref


@pytest.mark.parametrize(("selector", "position"), [("natural-activation", 1), ("body-behavior", 2)])
def test_select_by_group_id(suite: Suite, selector: str, position: int) -> None:
    assert select_group(suite, selector).position == position


@pytest.mark.parametrize("selector", ["0", "3", "99"])
def test_position_out_of_range_names_the_range(suite: Suite, selector: str) -> None:
    with pytest.raises(SelectionError) as caught:
        select_group(suite, selector)
    assert str(caught.value) == f'--skill-eval-group {selector} is out of range: suite "workflow-core" has a position from 1 to 2'


@pytest.mark.parametrize("selector", ["natural", "-1", "", "Natural-Activation"])
def test_unknown_id_names_the_valid_ids_and_range(suite: Suite, selector: str) -> None:
    with pytest.raises(SelectionError) as caught:
        select_group(suite, selector, option="--group")
    assert str(caught.value) == (
        f'--group "{selector}" matches no group of suite "workflow-core": '
        'expected one of "natural-activation", "body-behavior" or a position from 1 to 2'
    )


def test_position_works_before_group_ids_are_known(tmp_path: Path) -> None:
    suite = load_suite(write_suite_tree(tmp_path), tmp_path)
    assert select_group(suite, "2").ref == "groups/body-behavior.json"
    with pytest.raises(ValueError, match="load_suite_groups"):
        select_group(suite, "body-behavior")


def test_single_group_suite_names_position_one(tmp_path: Path) -> None:
    write_json(tmp_path / "g.json", spec_doc("body"))
    path = write_json(tmp_path / "suite.json", {"schema_version": 1, "kind": "suite", "id": "one", "groups": ["g.json"]})
    suite, _ = load_suite_groups(load_suite(path, tmp_path), tmp_path)
    with pytest.raises(SelectionError, match='has position 1$'):
        select_group(suite, "2")


def test_group_selector_on_a_direct_group_is_a_usage_error(tmp_path: Path) -> None:
    path = write_json(tmp_path / "g.json", spec_doc("body"))
    group = load_group(path, tmp_path)
    with pytest.raises(SelectionError) as caught:
        check_group_selection(group, "1")
    assert str(caught.value) == (
        f"--skill-eval-group selects a group of a suite; {path} is a group definition: "
        "drop --skill-eval-group, or run a suite that lists it"
    )
    assert isinstance(caught.value, SkillEvalError)
    check_group_selection(group, None)


def test_group_selector_on_a_suite_is_fine(suite: Suite) -> None:
    check_group_selection(suite, "1")


@pytest.mark.parametrize(("selector", "selected"), [(None, ("baseline", "candidate")), ("baseline", ("baseline",)), ("candidate", ("candidate",))])
def test_select_variants(selector: str | None, selected: tuple[str, ...]) -> None:
    assert select_variants(selector) == selected


def test_unknown_variant_names_the_valid_ones() -> None:
    with pytest.raises(SelectionError) as caught:
        select_variants("both", option="--variant")
    assert str(caught.value) == '--variant expects one of "baseline", "candidate", found "both"'


def test_duplicate_group_ids_across_a_suite_are_rejected(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", spec_doc("body"))
    write_json(tmp_path / "b.json", spec_doc("description"))
    write_json(tmp_path / "c.json", spec_doc("body"))
    path = write_json(tmp_path / "suite.json", {"schema_version": 1, "kind": "suite", "id": "dup", "groups": ["a.json", "b.json", "c.json"]})
    suite = load_suite(path, tmp_path)
    with pytest.raises(DefinitionError) as caught:
        load_suite_groups(suite, tmp_path)
    assert str(caught.value) == (
        f'{path}: /groups/2: expected a group whose id no earlier group uses, found id "retained-artifact-behavior" again '
        '(first in "a.json" at /groups/0)'
    )


def test_an_invalid_group_of_a_suite_names_the_group_file(tmp_path: Path) -> None:
    suite = load_suite(write_suite_tree(tmp_path), tmp_path)
    broken = tmp_path / "groups" / "body-behavior.json"
    broken.write_text('{"kind": "group"}')
    with pytest.raises(DefinitionError) as caught:
        load_suite_groups(suite, tmp_path)
    assert caught.value.file == str(broken)
