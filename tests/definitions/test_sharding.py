"""--skill-eval-shard K/N: parsing, and the properties of the group-to-shard assignment."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_skill_eval.definitions.sharding import Shard, assign_shards, group_key, parse_shard, shard_members
from pytest_skill_eval.errors import SelectionError

keys_strategy = st.lists(st.text(min_size=1, max_size=20), max_size=60, unique=True)


def _suite(n: int, name: str = "suite.json") -> list[str]:
    return [group_key(f".skill-eval/{name}", f"group-{i}") for i in range(n)]


@pytest.mark.parametrize(("text", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), (" 3/3 ", Shard(3, 3))])
def test_parse_shard(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard
    assert str(shard) == text.strip()


@pytest.mark.parametrize(("text", "detail"), [
    ("0/2", "K must be from 1 to 2"), ("3/2", "K must be from 1 to 2"), ("1/0", "N must be at least 1"),
    ("a/2", "found 'a/2'"), ("2", "found '2'"), ("", "found ''"), ("1/2/3", "found '1/2/3'"),
    ("-1/2", "found '-1/2'"), ("1.0/2", "found '1.0/2'"), ("１/２", "found '１/２'"),
])
def test_bad_shard_is_a_usage_error_naming_option_expected_and_found(text: str, detail: str) -> None:
    with pytest.raises(SelectionError) as info:
        parse_shard(text)
    message = str(info.value)
    assert message.startswith("--skill-eval-shard expects K/N, two whole numbers with 1 <= K <= N")
    assert detail in message


@given(keys_strategy, st.integers(min_value=1, max_value=9))
@settings(max_examples=150, deadline=None)
def test_every_group_is_in_exactly_one_shard_and_shards_differ_by_at_most_one(keys: list[str], count: int) -> None:
    assignment = assign_shards(keys, count)
    assert set(assignment) == set(keys)
    assert all(1 <= shard <= count for shard in assignment.values())
    members = [shard_members(assignment, Shard(k, count)) for k in range(1, count + 1)]
    assert sum(len(m) for m in members) == len(keys)  # disjoint and covering
    sizes = [len(m) for m in members]
    assert max(sizes) - min(sizes) <= 1
    if len(keys) >= count:
        assert min(sizes) >= 1, "no shard is empty while there are at least as many groups as shards"


@given(keys_strategy, st.integers(min_value=1, max_value=9), st.randoms(use_true_random=False))
@settings(max_examples=100, deadline=None)
def test_assignment_does_not_depend_on_order_or_duplicates(keys: list[str], count: int, rnd: object) -> None:
    shuffled = list(keys)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert assign_shards(shuffled + shuffled[:3], count) == assign_shards(keys, count)


def test_assignment_is_deterministic_across_calls_and_processes() -> None:
    # a fixed expectation: the hash is sha256, not Python's per-process salted hash()
    keys = _suite(6)
    assert assign_shards(keys, 3) == assign_shards(list(reversed(keys)), 3)
    assert sorted(assign_shards(keys, 3).values()) == [1, 1, 2, 2, 3, 3]
    assert assign_shards(["only"], 1) == {"only": 1}


@pytest.mark.parametrize("count", [2, 3, 4, 7, 10])
def test_adding_one_group_to_a_hundred_moves_only_a_few(count: int) -> None:
    moves = []
    for suite in range(30):
        keys = _suite(100, f"suite-{suite}.json")
        before = assign_shards(keys, count)
        after = assign_shards([*keys, group_key(f".skill-eval/suite-{suite}.json", "added")], count)
        moves.append(sum(before[k] != after[k] for k in keys))
    assert max(moves) <= 8, moves
    assert statistics.mean(moves) <= 3, moves


def test_a_shard_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        assign_shards(["a"], 0)


def test_more_shards_than_groups_leaves_some_empty() -> None:
    assignment = assign_shards(_suite(2), 3)
    assert sorted(len(shard_members(assignment, Shard(k, 3))) for k in (1, 2, 3)) == [0, 1, 1]
