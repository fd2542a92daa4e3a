"""The hostile corpus: real results, made once per test module by running the quickstart suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import Scene, Shards, make_shards


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, pi_host: object) -> Shards:
    """The quickstart suite run as shards 1/2 and 2/2 (real pi): two pristine results per module."""
    return make_shards(tmp_path_factory.mktemp("shards"))


@pytest.fixture
def scene(tmp_path: Path, shards: Shards) -> Scene:
    """This test's own copy of the results, and an outside no command may read from or write to."""
    return Scene(tmp_path, shards)
