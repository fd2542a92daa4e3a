"""The assignment is fixed by the keys alone: the same keys go to the same shards in every
run, on every machine and in every version (a shard of one run must match its rerun)."""

from __future__ import annotations

from pytest_skill_eval.definitions.sharding import assign_shards

KEYS = [f"suite/g{i}.json::group-{i}" for i in range(10)]


def test_the_same_keys_go_to_the_same_shards() -> None:
    # highest weight first, placed in the order of each key's own hash, within the quotas 4, 3, 3
    assert assign_shards(reversed(KEYS), 3) == {
        "suite/g0.json::group-0": 1, "suite/g3.json::group-3": 1, "suite/g4.json::group-4": 1,
        "suite/g6.json::group-6": 1, "suite/g5.json::group-5": 2, "suite/g7.json::group-7": 2,
        "suite/g9.json::group-9": 2, "suite/g1.json::group-1": 3, "suite/g2.json::group-2": 3,
        "suite/g8.json::group-8": 3,
    }
    assert list(assign_shards(KEYS, 3)) == ["suite/g2.json::group-2", "suite/g6.json::group-6",
                                            "suite/g0.json::group-0", "suite/g9.json::group-9",
                                            "suite/g4.json::group-4", "suite/g3.json::group-3",
                                            "suite/g7.json::group-7", "suite/g8.json::group-8",
                                            "suite/g1.json::group-1", "suite/g5.json::group-5"]
