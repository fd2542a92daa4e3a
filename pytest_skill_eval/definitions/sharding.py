"""Splitting a suite's groups into shards (``--skill-eval-shard K/N``): pure functions, no I/O.

A group's shard depends only on its identity (its *key*: the definition path relative to
the definition root and the group id, see :func:`group_key`) and on the whole set of
keys, never on positions or the order the keys are given in. The assignment is
rendezvous (highest-random-weight) hashing with bounded loads:

- every key ranks the N shards by ``sha256(key, shard)``; on its own it would go to its
  first choice, so adding or removing a key never moves any other key's first choice;
- every shard has a quota: ``len(keys) // N``, one more for shards 1 to ``len(keys) % N``,
  so shard sizes differ by at most one (and no shard is empty while there are at least N
  groups); adding a key raises exactly one shard's quota by one;
- keys are placed in the order of their own hash (not the order they were given in),
  each into its most preferred shard that still has room.

Adding one group to a suite of 100 therefore moves only the few groups whose preferred
shard filled up differently (about two on average, measured in
tests/definitions/test_sharding.py), while every shard stays within one group of every other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_skill_eval.errors import SelectionError

SHARD_OPTION = "--skill-eval-shard"


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard *index* (one-based) of *count*."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, option: str = SHARD_OPTION) -> Shard:
    """The shard ``K/N`` names; SelectionError naming *option*, what was expected and what was found."""
    expected = f"{option} expects K/N, two whole numbers with 1 <= K <= N (e.g. 2/4)"
    head, sep, tail = text.strip().partition("/")
    if not sep or not _whole(head) or not _whole(tail):
        raise SelectionError(f"{expected}, found {text!r}")
    index, count = int(head), int(tail)
    if count < 1:
        raise SelectionError(f"{expected}, found {text!r}: N must be at least 1")
    if not 1 <= index <= count:
        raise SelectionError(f"{expected}, found {text!r}: K must be from 1 to {count}")
    return Shard(index, count)


def _whole(text: str) -> bool:
    return text.isascii() and text.isdigit()


def group_key(definition_path: str, name: str) -> str:
    """A group's identity for sharding: ``<definition path relative to the root>::<group id>``.

    *definition_path* is the collected file (the suite, or a direct group definition) as a
    POSIX path relative to the definition root; *name* the group id (for a suite entry
    whose group does not load, its reference).
    """
    return f"{definition_path}::{name}"


def _weight(key: str, shard: int) -> bytes:
    return hashlib.sha256(f"{shard}\0{key}".encode()).digest()


def _order(key: str) -> bytes:
    return hashlib.sha256(f"order\0{key}".encode()).digest()


def assign_shards(keys: Iterable[str], count: int) -> dict[str, int]:
    """``{key: shard}`` (shards one-based) for every key, balanced to within one key.

    Deterministic and independent of the order of *keys*; duplicates count once.
    """
    if count < 1:
        raise ValueError(f"a shard count is at least 1, found {count}")
    unique = sorted(set(keys), key=lambda k: (_order(k), k))
    base, extra = divmod(len(unique), count)
    quota = [0, *(base + (1 if shard <= extra else 0) for shard in range(1, count + 1))]
    load = [0] * (count + 1)
    assigned: dict[str, int] = {}
    for key in unique:
        ranking = sorted(range(1, count + 1), key=lambda s: _weight(key, s), reverse=True)
        shard = next(s for s in ranking if load[s] < quota[s])
        load[shard] += 1
        assigned[key] = shard
    return assigned


def shard_members(assignment: Mapping[str, int], shard: Shard) -> frozenset[str]:
    """The keys *assignment* puts into *shard*."""
    return frozenset(key for key, index in assignment.items() if index == shard.index)
