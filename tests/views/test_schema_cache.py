"""The compiled schema checks kept between processes (services.schema_cache).

A kept check must answer exactly as one compiled now, and the cache holds code that runs in
the evaluator: a file this user did not write (writable by others, a link, a different
owner) or that is damaged is never taken; the check is compiled afresh instead.
"""

from __future__ import annotations

import json
import marshal
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from pytest_skill_eval import schemas
from pytest_skill_eval.schemas import fast
from pytest_skill_eval.services.schema_cache import SchemaCodeCache

QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart" / "groups"
GROUP_DOCS: list[Any] = [
    *(json.loads(path.read_text(encoding="utf-8")) for path in sorted(QUICKSTART.glob("*.json"))),
    {},
    {"schema_version": 1, "kind": "group", "id": "g"},
    [],
    "group",
]

#: what a planted file would do: take every document as valid
ACCEPT_ALL = marshal.dumps(compile("def validate(data, custom_formats={}, name_prefix=None):\n    return data\n",
                                   "<planted>", "exec"))


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[SchemaCodeCache]:
    store = SchemaCodeCache(tmp_path / "schema-checks")
    schemas.use_code_store(store)
    yield store
    schemas.use_code_store(None)


def _answers() -> list[bool]:
    check = schemas._fast_check("group")
    assert check is not None
    return [check(doc) for doc in GROUP_DOCS]


def _fresh() -> list[bool]:
    schemas.use_code_store(None)
    try:
        return _answers()
    finally:
        schemas._fast_check.cache_clear()


def _key() -> str:
    bundled = fast.bundle(schemas._target("group", None), schemas._by_id())
    return fast.code_key(bundled, fastjsonschema.VERSION)


def test_a_kept_check_answers_as_a_fresh_one_and_is_not_compiled_again(
        cache: SchemaCodeCache, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _fresh()
    assert True in expected and False in expected
    schemas.use_code_store(cache)
    assert _answers() == expected  # compiled and saved
    assert (cache.directory / f"{_key()}.code").is_file()
    assert (cache.directory.stat().st_mode & 0o777) == 0o700

    def no_compiling(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("compiled again although the cache holds it")

    monkeypatch.setattr(fastjsonschema, "compile_to_code", no_compiling)
    schemas._fast_check.cache_clear()  # a new process, as far as the check is concerned
    assert _answers() == expected


def test_the_key_follows_the_schema_and_the_compiler() -> None:
    bundled = fast.bundle(schemas._target("group", None), schemas._by_id())
    other = fast.bundle(schemas._target("suite", None), schemas._by_id())
    assert fast.code_key(bundled, "1.0") != fast.code_key(other, "1.0")
    assert fast.code_key(bundled, "1.0") != fast.code_key(bundled, "1.1")


def _plant(cache: SchemaCodeCache, data: bytes, mode: int = 0o600) -> Path:
    cache.directory.mkdir(parents=True, exist_ok=True)
    path = cache.directory / f"{_key()}.code"
    path.write_bytes(data)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_others_can_write_is_never_taken(cache: SchemaCodeCache, mode: int) -> None:
    expected = _fresh()
    _plant(cache, ACCEPT_ALL, mode)
    schemas.use_code_store(cache)
    assert _answers() == expected


def test_a_link_is_never_followed(cache: SchemaCodeCache, tmp_path: Path) -> None:
    expected = _fresh()
    planted = tmp_path / "planted.code"
    planted.write_bytes(ACCEPT_ALL)
    planted.chmod(0o600)
    cache.directory.mkdir(parents=True)
    os.symlink(planted, cache.directory / f"{_key()}.code")
    schemas.use_code_store(cache)
    assert _answers() == expected


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_a_file_of_another_owner_is_never_taken(cache: SchemaCodeCache) -> None:
    expected = _fresh()
    os.chown(_plant(cache, ACCEPT_ALL), 12345, 12345)
    schemas.use_code_store(cache)
    assert _answers() == expected


@pytest.mark.parametrize("data", [b"", b"\x00garbage", marshal.dumps({"validate": 1}), marshal.dumps(b"x" * 10)[:5]])
def test_a_damaged_file_is_compiled_again_and_replaced(cache: SchemaCodeCache, data: bytes) -> None:
    expected = _fresh()
    path = _plant(cache, data)
    schemas.use_code_store(cache)
    assert _answers() == expected
    assert path.read_bytes() != data  # the fresh compile replaced it


def test_an_unwritable_cache_only_costs_the_compile(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x", encoding="utf-8")
    expected = _fresh()
    schemas.use_code_store(SchemaCodeCache(blocked / "schema-checks"))
    try:
        assert _answers() == expected
    finally:
        schemas.use_code_store(None)
