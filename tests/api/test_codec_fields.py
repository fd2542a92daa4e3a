"""The codec's field options on records declared while the test runs.

The evidence and grade records are planned once, when a first test reads or writes them;
these records are declared inside the tests (with annotations evaluated at once, so that
records local to a test can name each other), so every option (:func:`codec.meta`), the
plan built from the fields and the reader's type checks are exercised here, each time.
"""

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import pytest

from pytest_skill_eval import codec, typehints
from pytest_skill_eval.errors import EvidenceError, MalformedGradeError


@pytest.fixture(autouse=True)
def _fresh_codec_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan every record and make every field reader anew in each test: the codec keeps them
    per class and per type for the process, and a mutation run forks each mutant from a
    process that has already run these tests (docs/testing.md)."""
    monkeypatch.setattr(codec, "_PLANS", {})
    monkeypatch.setattr(codec, "_CONVS", {})


def test_every_field_option_writes_and_reads_as_declared() -> None:
    @dataclass(frozen=True)
    class Part:
        x: int
        y: str | None = None

    @dataclass(frozen=True)
    class Row(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(
            order=("renamed", "plain", "gone", "empty", "blank", "counts", "kept", "part", "fixed", "lenient", "twice"),
            error=MalformedGradeError, name="row.json", strict=True)
        renamed: int = field(metadata=codec.meta(key="Renamed"))
        plain: Mapping[str, int] = field(metadata=codec.meta(key="plain"))
        gone: str | None = field(default=None, metadata=codec.meta(omit=codec.if_none))
        empty: tuple[str, ...] = field(default=(), metadata=codec.meta(omit=codec.if_empty))
        blank: str | None = field(default=None, metadata=codec.meta(none_as=""))
        counts: Mapping[str, int] = field(default_factory=dict, metadata=codec.meta(sort=True))
        kept: int = 4
        part: Part | None = field(default=None, metadata=codec.meta(inline="x"))
        fixed: int = field(default=0, metadata=codec.meta(absent=7))
        lenient: int = field(default=0, metadata=codec.meta(read=int))
        turn: int | None = field(default=None, metadata=codec.meta(parent="index"))

        @property
        def twice(self) -> int:
            return 2 * self.renamed

    @dataclass(frozen=True)
    class Holder(codec.Stored):
        index: int
        rows: tuple[Row, ...]
        row: Row | None = None

    row = Row(1, {"b": 1, "a": 2}, counts={"z": 1, "a": 2}, part=Part(3, "y"), lenient=5)
    stored = row.to_json()
    assert stored == {"Renamed": 1, "plain": {"b": 1, "a": 2}, "blank": "", "counts": {"a": 2, "z": 1}, "kept": 4,
                      "x": 3, "y": "y", "fixed": 0, "lenient": 5, "twice": 2}
    assert list(stored) == ["Renamed", "plain", "blank", "counts", "kept", "x", "y", "fixed", "lenient", "twice"]
    assert list(stored["plain"]) == ["b", "a"] and list(stored["counts"]) == ["a", "z"]
    assert codec.stored_keys(Row) == ("Renamed", "plain", "gone", "empty", "blank", "counts", "kept", "x", "y",
                                      "fixed", "lenient", "twice")
    assert Row.from_json(stored) == row
    full = Row(1, {}, gone="g", empty=("e",), blank="b", part=None)
    assert full.to_json() == {"Renamed": 1, "plain": {}, "gone": "g", "empty": ["e"], "blank": "b", "counts": {},
                              "kept": 4, "fixed": 0, "lenient": 0, "twice": 2}
    assert Row.from_json(full.to_json()) == full
    # absent keys: the declared absent value, else the default; a lenient reader converts
    assert Row.from_json({"Renamed": 1, "plain": {}, "lenient": "6"}) == Row(1, {}, fixed=7, lenient=6)
    assert Row.from_json({"Renamed": 1, "plain": {}, "blank": ""}).blank is None
    # the parent's key, read into a nested record and never stored in it
    holder = Holder(2, (Row(1, {}, turn=2),), Row(2, {}, turn=2))
    assert "turn" not in holder.to_json()["rows"][0]
    assert Holder.from_json(holder.to_json()) == holder
    assert Row.from_json({"Renamed": 1, "plain": {}}).turn is None
    with pytest.raises(MalformedGradeError, match=r"^Renamed: expected an integer, found nothing$"):
        Row.from_json({"plain": {}})
    with pytest.raises(MalformedGradeError, match=r"^plain/a: expected an integer, found string \"1\"$"):
        Row.from_json({"Renamed": 1, "plain": {"a": "1"}})
    with pytest.raises(MalformedGradeError, match=r"^where: row\.json: expected an object, found null$"):
        codec.from_json(Row, None, "where")


def test_a_record_stored_as_one_value() -> None:
    @dataclass(frozen=True)
    class Doc(codec.Stored):
        items: tuple[int, ...] = field(metadata=codec.meta(whole=True))

    assert Doc((1, 2)).to_json() == [1, 2]
    assert Doc.from_json([1, 2]) == Doc((1, 2))
    assert codec.stored_keys(Doc) == ("items",)


def test_an_option_on_one_field_leaves_the_others_alone() -> None:
    @dataclass(frozen=True)
    class Row(codec.Stored):
        a: Mapping[str, int] = field(default_factory=dict, metadata=codec.meta(key="A"))
        b: str | None = field(default=None, metadata=codec.meta(key="B"))
        c: Any = None

    row = Row({"z": 1, "a": 2})
    assert list(row.to_json()) == ["A", "B", "c"] and list(row.to_json()["A"]) == ["z", "a"]
    assert row.to_json()["B"] is None
    assert Row.from_json({"A": {"z": 1}, "B": None, "c": [1]}) == Row({"z": 1}, None, [1])
    assert Row.from_json({}) == Row()
    assert "none_as=UNSET" in repr(codec.meta(key="A")[codec.META])


def test_the_declared_order_names_the_fields_left_out() -> None:
    @dataclass(frozen=True)
    class Partial(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(order=("a",))
        a: int
        b: int
        c: int
        d: int | None = field(default=None, metadata=codec.meta(parent="x"))

    with pytest.raises(TypeError, match=r"^Partial: STORED order leaves out b, c$"):
        Partial(1, 2, 3).to_json()


@dataclass(frozen=True)
class _Inner:
    n: int


@dataclass(frozen=True)
class Typed(codec.Stored):
    STORED: ClassVar[codec.Layout] = codec.Layout(error=MalformedGradeError, strict=True)
    word: Literal["a", "b"] | None = None
    grade: Literal["a", "b"] = "a"
    words: Literal["a"] | Literal[2] = "a"
    text: str = ""
    number: float = 0.0
    count: int = 0
    flag: bool = False
    names: tuple[str, ...] = ()
    inners: tuple[_Inner, ...] = ()
    maps: tuple[Mapping[str, int], ...] = ()
    ints: tuple[int, ...] = ()
    pair: tuple[str, int] = ("", 0)
    either: int | str = 0
    record: str | _Inner = ""
    nothing: None = None
    table: Mapping[str, Any] = field(default_factory=dict)
    inner: _Inner | None = None
    maybe: str | None = None


@pytest.mark.parametrize(("data", "message"), [
    ({"word": "c"}, 'word: expected one of a, b or null, found string "c"'),
    ({"grade": "c"}, "grade: 'c' is not valid. Valid values: a, b"),
    ({"grade": True}, "grade: True is not valid. Valid values: a, b"),
    ({"grade": 1.5}, "grade: 1.5 is not valid. Valid values: a, b"),
    ({"grade": None}, "grade: None is not valid. Valid values: a, b"),
    ({"words": "b"}, "words: 'b' is not valid. Valid values: a, 2"),
    ({"words": 2.0}, "words: 2.0 is not valid. Valid values: a, 2"),
    ({"text": 1}, "text: expected a string, found number 1"),
    ({"text": None}, "text: expected a string, found null"),
    ({"number": "1"}, 'number: expected a number, found string "1"'),
    ({"number": True}, "number: expected a number, found boolean true"),
    ({"count": 1.5}, "count: expected an integer, found number 1.5"),
    ({"count": False}, "count: expected an integer, found boolean false"),
    ({"flag": 1}, "flag: expected a boolean, found number 1"),
    ({"names": "a"}, 'names: expected an array of strings, found string "a"'),
    ({"names": [1]}, "names/0: expected a string, found number 1"),
    ({"inners": {}}, "inners: expected an array of objects, found object {}"),
    ({"maps": 1}, "maps: expected an array of objects, found number 1"),
    ({"ints": 1}, "ints: expected an array, found number 1"),
    ({"pair": ["s"]}, 'pair: expected an array of 2 items, found array ["s"]'),
    ({"pair": 1}, "pair: expected an array, found number 1"),
    ({"pair": [1, 1]}, "pair/0: expected a string, found number 1"),
    ({"record": {"n": "1"}}, 'record: expected a string or an object, found object {"n":"1"}'),
    ({"either": None}, "either: expected an integer or a string, found null"),
    ({"either": [1]}, "either: expected an integer or a string, found array [1]"),
    ({"nothing": 1}, "nothing: expected null, found number 1"),
    ({"table": []}, "table: expected an object, found array []"),
    ({"inner": 1}, "inner: expected an object or null, found number 1"),
    ({"inner": {"n": "1"}}, 'inner/n: expected an integer, found string "1"'),
    ({"maybe": 1}, "maybe: expected a string or null, found number 1"),
])
def test_a_strict_record_names_the_expected_type_and_what_it_found(data: object, message: str) -> None:
    with pytest.raises(MalformedGradeError) as info:
        Typed.from_json(data)
    assert str(info.value) == message


def test_a_strict_record_reads_every_valid_value_back() -> None:
    typed = Typed("a", "b", 2, "t", 1, 2, True, ("n",), (_Inner(1),), ({"k": 1},), (1,), ("s", 1), "e", _Inner(3), None,
                  {"k": [1]}, _Inner(2), "m")
    assert Typed.from_json(typed.to_json()) == typed
    assert Typed.from_json({"count": 2.0, "number": 3}).count == 2.0


def test_a_lenient_record_keeps_what_its_schema_let_through() -> None:
    @dataclass(frozen=True)
    class Loose(codec.Stored):
        word: Literal["a"] = "a"
        text: str = ""
        nothing: None = None
        ints: tuple[int, ...] = ()
        pair: tuple[int, int] = (0, 0)
        table: Mapping[str, int] = field(default_factory=dict)
        either: int | str = 0
        pick: _Inner | Typed | None = None

    assert Loose.from_json({"word": "b", "text": 1, "nothing": 2, "ints": 3, "pair": [1], "table": 4,
                            "either": [1], "pick": 3}) == Loose("b", 1, 2, 3, [1], 4, [1], 3)  # type: ignore[arg-type]
    with pytest.raises(EvidenceError, match=r"^document: expected an object, found number 1$"):
        Loose.from_json(1)


@pytest.mark.parametrize(("value", "shown"), [
    (None, "null"), (True, "boolean true"), ("s", 'string "s"'), (1, "number 1"), (1.5, "number 1.5"),
    ([], "array []"), ({}, "object {}"),
])
def test_what_a_message_says_was_found(value: object, shown: str) -> None:
    assert codec.found(value) == shown
    assert typehints.found(value) == shown


def test_what_a_message_says_of_a_value_never_stored() -> None:
    assert typehints.found(typehints.MISSING) == "nothing"


def test_a_field_type_the_codec_cannot_read_is_a_programming_error() -> None:
    @dataclass(frozen=True)
    class Odd(codec.Stored):
        things: set[int]

    with pytest.raises(TypeError, match="cannot read a field of type"):
        Odd.from_json({"things": [1]})


def test_a_required_union_must_be_there_and_a_parent_field_is_never_stored() -> None:
    @dataclass(frozen=True)
    class Child(codec.Stored):
        turn: int | None = field(metadata=codec.meta(parent="index"))
        either: int | str
        nothing: None
        name: str = ""

    assert Child(3, 1, None, "n").to_json() == {"either": 1, "nothing": None, "name": "n"}
    with pytest.raises(EvidenceError, match=r"^either: expected an integer or a string, found nothing$"):
        Child.from_json({"name": "n", "nothing": None})
    with pytest.raises(EvidenceError, match=r"^nothing: expected null, found nothing$"):
        Child.from_json({"either": 1})


def test_an_inline_record_is_found_in_either_order_of_its_union() -> None:
    @dataclass(frozen=True)
    class Part:
        x: int

    @dataclass(frozen=True)
    class Row(codec.Stored):
        part: None | Part = field(default=None, metadata=codec.meta(inline="x"))

    assert codec.stored_keys(Row) == ("x",)
    assert Row.from_json({"x": 1}) == Row(Part(1))

    @dataclass(frozen=True)
    class Wrong(codec.Stored):
        part: int = field(default=0, metadata=codec.meta(inline="x"))

    with pytest.raises(TypeError, match=r"^no record type in <class 'int'>$"):
        codec.stored_keys(Wrong)


def test_a_record_in_a_union_of_several_reads_its_parent_key() -> None:
    @dataclass(frozen=True)
    class Leaf:
        turn: int | None = field(default=None, metadata=codec.meta(parent="index"))
        n: int = 0

    @dataclass(frozen=True)
    class Doc:
        leaves: tuple[Leaf, ...] = field(metadata=codec.meta(whole=True))

    @dataclass(frozen=True)
    class Branch:
        leaf: Leaf | None = field(default=None, metadata=codec.meta(inline="n"))

    @dataclass(frozen=True)
    class Tree(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(strict=True)
        index: int
        leaf: str | Leaf
        leaves: Mapping[str, Leaf] = field(default_factory=dict)
        raw: typing.Mapping = field(default_factory=dict)  # type: ignore[type-arg]  # noqa: UP006
        doc: Doc = Doc(())
        branch: Branch = Branch()

    assert Tree.from_json({"index": 4, "leaf": {"n": 1}, "leaves": {"a": {"n": 2}}, "raw": {"b": [None]}}) == Tree(
        4, Leaf(4, 1), {"a": Leaf(4, 2)}, {"b": [None]})
    assert Tree.from_json({"index": 5, "leaf": "s", "doc": [{"n": 3}], "branch": {"n": 6}}) == Tree(
        5, "s", doc=Doc((Leaf(5, 3),)), branch=Branch(Leaf(5, 6)))


def test_an_array_record_s_items_read_their_parent_key_from_the_enclosing_object() -> None:
    @dataclass(frozen=True)
    class Step:
        turn: int | None = field(default=None, metadata=codec.meta(parent="index"))
        n: int = 0

    @dataclass(frozen=True)
    class Pair:
        STORED: ClassVar[codec.Layout] = codec.Layout(array=True)
        first: Step
        second: Step

    @dataclass(frozen=True)
    class Holder:
        STORED: ClassVar[codec.Layout] = codec.Layout(strict=True)
        index: int
        pair: Pair

    stored = {"index": 4, "pair": [{"n": 1}, {"n": 2}]}
    assert codec.to_json(Holder(4, Pair(Step(4, 1), Step(4, 2)))) == stored
    assert codec.from_json(Holder, stored) == Holder(4, Pair(Step(4, 1), Step(4, 2)))


def test_a_nested_record_s_errors_name_the_whole_path_from_the_document() -> None:
    @dataclass(frozen=True)
    class Part:
        x: int

    @dataclass(frozen=True)
    class Doc:
        items: tuple[int, ...] = field(metadata=codec.meta(whole=True))

    @dataclass(frozen=True)
    class Inner:
        id: str = ""
        part: Part | None = field(default=None, metadata=codec.meta(inline="x"))
        planned: int = field(default=0, metadata=codec.meta(within="trials"))

    @dataclass(frozen=True)
    class Outer(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(error=MalformedGradeError, name="outer.json", strict=True)
        doc: Doc = Doc(())
        inners: tuple[Inner, ...] = ()

    assert Outer.from_json({"doc": [1], "inners": [{"x": 2, "trials": {"planned": 3}}]}) == Outer(
        Doc((1,)), (Inner(part=Part(2), planned=3),))
    for data, message in [
        ({"doc": [1, "x"]}, 'doc/1: expected an integer, found string "x"'),
        ({"inners": [{}, {"x": "2"}]}, 'inners/1/x: expected an integer, found string "2"'),
        ({"inners": [{"trials": {"planned": "3"}}]}, 'inners/0/trials/planned: expected an integer, found string "3"'),
        ({"inners": [{"trials": [3]}]}, "inners/0/trials: expected an object, found array [3]"),
    ]:
        with pytest.raises(MalformedGradeError) as info:
            Outer.from_json(data)
        assert str(info.value) == message


def test_a_strict_whole_document_checks_its_items() -> None:
    @dataclass(frozen=True)
    class Doc(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(error=MalformedGradeError, name="doc.json", strict=True)
        items: tuple[int, ...] = field(metadata=codec.meta(whole=True))

    with pytest.raises(MalformedGradeError, match=r'^0: expected an integer, found string "x"$'):
        Doc.from_json(["x"])


def test_one_record_read_strictly_and_leniently_keeps_each_reading() -> None:
    @dataclass(frozen=True)
    class Inner:
        n: int = 0

    @dataclass(frozen=True)
    class Strict(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(error=MalformedGradeError, strict=True)
        inner: Inner = Inner()

    @dataclass(frozen=True)
    class Loose(codec.Stored):
        inner: Inner = Inner()

    for _ in range(2):  # either reading first, then the other
        assert Loose.from_json({"inner": {"n": "1"}}) == Loose(Inner("1"))  # type: ignore[arg-type]
        with pytest.raises(MalformedGradeError, match=r'^inner/n: expected an integer, found string "1"$'):
            Strict.from_json({"inner": {"n": "1"}})


def test_the_items_of_a_fixed_length_array_read_their_parent_key() -> None:
    @dataclass(frozen=True)
    class Step:
        turn: int | None = field(default=None, metadata=codec.meta(parent="index"))
        n: int = 0

    @dataclass(frozen=True)
    class Turn(codec.Stored):
        STORED: ClassVar[codec.Layout] = codec.Layout(strict=True)
        index: int
        steps: tuple[Step, Step]

    stored = {"index": 3, "steps": [{"n": 1}, {"n": 2}]}
    assert Turn(3, (Step(3, 1), Step(3, 2))).to_json() == stored
    assert Turn.from_json(stored) == Turn(3, (Step(3, 1), Step(3, 2)))
