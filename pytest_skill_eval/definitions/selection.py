"""Selecting groups and variants by the command line's selectors (``--skill-eval-group``, ``--skill-eval-variant``)."""

from __future__ import annotations

from pathlib import Path

from pytest_skill_eval.definitions.model import VARIANTS, Group, GroupRef, Suite, VariantName
from pytest_skill_eval.errors import SelectionError
from pytest_skill_eval.schemas import join_quoted as _join_quoted
from pytest_skill_eval.schemas import quote as _quote


def select_group(suite: Suite, selector: str, option: str = "--skill-eval-group") -> GroupRef:
    """Return the suite group *selector* names: a group id or a one-based position.

    Selecting by id needs the group ids (:func:`load_suite_groups` fills them in).
    Raises SelectionError naming the valid ids and positions.
    """
    count = len(suite.groups)
    ids = [ref.group_id for ref in suite.groups]
    choices = f"a position from 1 to {count}" if count > 1 else "position 1"
    if selector.isascii() and selector.isdigit():
        position = int(selector)
        if 1 <= position <= count:
            return suite.groups[position - 1]
        raise SelectionError(f"{option} {selector} is out of range: suite {_quote(suite.id)} has {choices}")
    if any(ident is None for ident in ids):
        raise ValueError("select_group needs group ids to select by id; load the suite with load_suite_groups")
    for ref in suite.groups:
        if ref.group_id == selector:
            return ref
    known = _join_quoted([str(ident) for ident in ids])
    raise SelectionError(
        f"{option} {_quote(selector)} matches no group of suite {_quote(suite.id)}: expected one of {known} or {choices}"
    )


def select_variants(selector: str | None, option: str = "--skill-eval-variant") -> tuple[VariantName, ...]:
    """Return the variants a ``--variant`` value selects (both when *selector* is None)."""
    if selector is None:
        return VARIANTS
    for name in VARIANTS:
        if selector == name:
            return (name,)
    raise SelectionError(f"{option} expects one of {_join_quoted(VARIANTS)}, found {_quote(selector)}")


def check_group_selection(definition: Group | Suite, selector: str | None, option: str = "--skill-eval-group") -> None:
    """Raise SelectionError when a group selector is applied to a direct group definition."""
    if selector is not None and isinstance(definition, Group):
        raise group_selector_on_group(definition.path, option)


def group_selector_on_group(path: Path, option: str = "--skill-eval-group") -> SelectionError:
    """The error for a group selector given with the group definition *path* (no suite to select from)."""
    return SelectionError(f"{option} selects a group of a suite; {path} is a group definition: "
                          f"drop {option}, or run a suite that lists it")
