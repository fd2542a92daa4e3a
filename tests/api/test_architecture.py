"""The package's boundaries, read from its source with ``ast`` (issue 31, sections 3 and 4).

The floors are the table under "## Floors" in docs/architecture.md; this test parses it, so
the document a newcomer reads and the rule the build keeps are one text. Every top-level
module and subpackage of ``pytest_skill_eval`` (a *unit*) stands on exactly one floor. An
import is an edge whether it is at module level, inside a function or under
``TYPE_CHECKING``; ``from a import b`` is an edge to ``a.b`` when that is a module.

The package root ``pytest_skill_eval/__init__.py`` is the public facade: it imports nothing
at run time (tests/api/test_public_api.py keeps that), so its lazy names are no edge and
importing ``__version__`` from it is allowed from anywhere.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_skill_eval"
NAME = "pytest_skill_eval"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SHELLS = ("plugin", "commands")


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (or the outside module)
    name: str | None  # the imported name when it is no module
    line: int
    typing_only: bool = False  # under ``if TYPE_CHECKING:``

    def where(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}" + (f".{self.name}" if self.name else "")


def _none(found: Iterable[object] | Mapping[str, object], why: str = "") -> None:
    """Asserts that a check found nothing, listing in full what it found."""
    items = list(found.items()) if isinstance(found, Mapping) else list(found)
    assert not items, "\n".join([why, *map(str, items)])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _trees() -> Iterator[tuple[str, Path, ast.Module]]:
    for module, path in MODULES.items():
        yield module, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _edges() -> list[Edge]:
    edges: list[Edge] = []
    for module, path, tree in _trees():
        typing_only = {
            id(inner) for block in ast.walk(tree)
            if isinstance(block, ast.If) and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            for stmt in block.body for inner in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges.extend(Edge(module, alias.name, None, node.lineno, id(node) in typing_only)
                             for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                    here = here[: len(here) - node.level + 1]
                    base = ".".join([*here, base] if base else here)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in MODULES:
                        edges.append(Edge(module, full, None, node.lineno, id(node) in typing_only))
                    else:
                        edges.append(Edge(module, base, alias.name, node.lineno, id(node) in typing_only))
    return edges


EDGES = _edges()
INTERNAL = [e for e in EDGES if e.target.startswith(NAME + ".") or e.target == NAME]


def _unit(module: str) -> str:
    """The top-level module or subpackage a module belongs to (``grading``, ``errors``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _floors() -> dict[str, int]:
    """``unit -> floor number`` from the table under "## Floors" in docs/architecture.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Floors\n", 1)[1].split("\n## ", 1)[0]
    floors: dict[str, int] = {}
    for line in section.splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|", line)
        if row is None:
            continue
        for unit in re.findall(r"`([a-z_]+)(?:/|\.py)?`", row.group(2)):
            assert unit not in floors, f"docs/architecture.md names {unit} on two floors"
            floors[unit] = int(row.group(1))
    return floors


FLOORS = _floors()
UNITS = sorted({_unit(m) for m in MODULES if m != NAME})


def test_every_unit_stands_on_exactly_one_floor() -> None:
    _none(sorted(set(UNITS) - set(FLOORS)), "add these to the Floors table in docs/architecture.md")
    _none(sorted(set(FLOORS) - set(UNITS)), "the Floors table names units that do not exist")


def _upward() -> list[str]:
    return sorted(
        e.where() + f" (floor {FLOORS[_unit(e.source)]} -> {FLOORS[_unit(e.target)]})"
        for e in INTERNAL
        if e.target != NAME and e.source != NAME and _unit(e.source) in FLOORS and _unit(e.target) in FLOORS
        and FLOORS[_unit(e.target)] > FLOORS[_unit(e.source)]
    )


def test_no_module_imports_from_a_higher_floor() -> None:
    _none(_upward())


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_no_import_cycle_between_units() -> None:
    """Units on one floor may import each other, but never round a cycle."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in INTERNAL:
        if e.source != NAME and e.target != NAME and _unit(e.source) != _unit(e.target):
            graph[_unit(e.source)].add(_unit(e.target))
    _none(_cycles(graph))


def test_no_import_cycle_between_modules() -> None:
    """No two modules need each other at run time: an import of a module that is importing
    this one, put inside a function to dodge the cycle, is a cycle all the same. Imports
    under ``TYPE_CHECKING`` are annotations only and may go round (a session and the items
    it holds name each other's types); between units they count like any other."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in INTERNAL:
        if e.source != NAME and e.target != NAME and e.source != e.target and not e.typing_only:
            graph[e.source].add(e.target)
    # A package's __init__ imported for a submodule is no cycle of the submodule's own.
    for source in list(graph):
        graph[source] -= {t for t in graph[source] if source.startswith(t + ".")}
    _none(_cycles(graph))


def test_the_two_shells_stand_side_by_side() -> None:
    """``plugin/`` (pytest) and ``commands/`` (the skill-eval script) share services from a
    floor below, never each other's modules."""
    crossing = sorted(
        e.where() for e in INTERNAL
        if {_unit(e.source), _unit(e.target)} == set(SHELLS)
    )
    _none(crossing)


def test_no_private_name_is_imported_from_another_module() -> None:
    private = sorted(
        e.where() for e in INTERNAL
        if e.name is not None and e.name.startswith("_") and not e.name.startswith("__")
    )
    _none(private)


PYTEST_SHIM = f"{NAME}.plugin.pytest_internals"


def test_only_the_documented_shim_imports_pytest_internals() -> None:
    """pytest's private ``_pytest`` is imported in one module, whose docstring gives, for every
    name it imports, the upstream reason (no public API)."""
    internal = [e for e in EDGES if e.target == "_pytest" or e.target.startswith("_pytest.")]
    _none(sorted(e.where() for e in internal if e.source != PYTEST_SHIM))
    doc = ast.get_docstring(ast.parse(MODULES[PYTEST_SHIM].read_text(encoding="utf-8"))) or ""
    _none(sorted(e.where() for e in internal if f"``{e.name}``" not in doc), "not explained in the shim's docstring")
    assert internal, "the shim imports nothing: remove it and this test's exception for it"


def _classes() -> Iterator[tuple[str, ast.ClassDef]]:
    for module, _path, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                yield module, node


def _exception_classes() -> dict[str, str]:
    """``class name -> module`` of every class deriving (within the package) from an exception."""
    builtin = {name for name, value in vars(builtins).items()
               if isinstance(value, type) and issubclass(value, BaseException)}
    bases: dict[str, tuple[str, list[str]]] = {}
    for module, node in _classes():
        bases[node.name] = (module, [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases])
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, (module, parents) in bases.items():
            if name not in found and any(p in builtin or p in found for p in parents):
                found[name] = module
                changed = True
    return found


def test_every_exception_class_is_defined_in_errors() -> None:
    """Module-private exceptions (``_Name``) are control flow inside one module and never leave
    it (the private-name rule above keeps them from being imported); every other one is in the
    one error tree."""
    outside = sorted(
        f"{module}.{name}" for name, module in _exception_classes().items()
        if module != f"{NAME}.errors" and not name.startswith("_")
    )
    _none(outside)


def test_every_exception_class_name_ends_in_error() -> None:
    """One suffix rule for the whole package, module-private exceptions included, so a name
    says it is an exception wherever it is raised or caught (ruff's N818 sees only the direct
    subclasses of ``Exception`` and of names ending in ``Error``; this sees every one)."""
    _none(sorted(f"{module}.{name}" for name, module in _exception_classes().items()
                 if not name.endswith("Error")), "rename these to end in Error")
    assert len(_exception_classes()) > 20, "the exception finder sees too few classes to be trusted"


def test_no_two_classes_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for module, node in _classes():
        where[node.name].append(module)
    _none({name: sorted(mods) for name, mods in where.items() if len(mods) > 1})


def _tree_listing() -> dict[str, set[str]]:
    """``package -> names`` as the first ``text`` block of docs/architecture.md lists them
    (``""`` for the top-level modules)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    listed: dict[str, set[str]] = defaultdict(set)
    current: str | None = None
    for line in block.splitlines()[1:]:
        package = re.match(r"\s{2}([a-z_]+)/\s", line + " ")
        if package:
            current = package.group(1)
            rest = line[package.end() - 1:]
        elif re.match(r"\s{2}[a-z_]+\.py\b", line):
            current = None
            rest = line
        else:
            rest = line
        rest = re.sub(r"\([^)]*\)?", "", rest)  # a parenthesised remark names no module
        if current is None:
            listed[""].update(re.findall(r"\b([a-z_]+)\.py\b", rest))
        else:
            listed[current].update(re.findall(r"\b([a-z_]+)\b", rest))
    return listed


def test_the_architecture_tree_names_every_module() -> None:
    listed = _tree_listing()
    missing = []
    for module in MODULES:
        parts = module.split(".")[1:]
        if not parts or parts[-1] == "__init__" or MODULES[module].name == "__init__.py":
            continue
        if len(parts) == 1 and parts[0] not in listed[""]:
            missing.append(f"{parts[0]}.py")
        elif len(parts) == 2 and parts[1] not in listed[parts[0]]:
            missing.append(f"{parts[0]}/{parts[1]}")
    _none(missing, "docs/architecture.md's tree does not name these modules")


def test_the_parsers_see_the_real_tree() -> None:
    """A broken split would make every check above vacuous."""
    assert len(MODULES) > 100 and len(INTERNAL) > 300
    assert FLOORS["errors"] == 1 and FLOORS["plugin"] == FLOORS["commands"] == max(FLOORS.values())
    listed = _tree_listing()
    assert {"model", "loading"} <= listed["definitions"] and "errors" in listed[""]


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert _cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


MAX_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    """Split a module rather than grow it past the limit (docs/architecture.md)."""
    counts = {module: len(path.read_text(encoding="utf-8").splitlines()) for module, path in MODULES.items()}
    _none(sorted(f"{m}: {n} lines" for m, n in counts.items() if n > MAX_LINES),
          f"over {MAX_LINES} lines: split these into cohesive modules of their package")
    assert max(counts.values()) > MAX_LINES // 2, "the line counts are not read"
