"""Scan the pinned pi host for every environment variable it reads; check or write the table.

    .venv/bin/python tools/scan_host_env.py --check   # CI: fail when the host reads a name the table lacks
    .venv/bin/python tools/scan_host_env.py --write   # after a pi upgrade: refresh, then review

What is scanned: every ``.js``/``.mjs``/``.cjs`` file under the installed host's
``node_modules`` (pi's bundle, the SDKs it ships and every other installed package), the
evaluator's own extensions that run inside pi (``pytest_skill_eval/host/extensions``), and the
environment variables the pinned node documents in ``node --help``. ``tools/envscan.py``
is the parser (what counts as a read, how computed keys are resolved).

The table, ``pytest_skill_eval/host/env-names.json``, has one entry per name, prefix family,
suffix family and unresolved *construction* (a read whose key the parser cannot work out).
Scanned entries carry ``found`` (package: file); entries a reviewer added for readers the scan
cannot see (the dynamic loader, shells, node's C++) carry ``readers`` instead. Each name or
family has a reviewed ``class`` (``launch-control``, ``reserved``, ``safe``) and ``reason``;
``--write`` adds new ones as ``unreviewed``, which the policy treats as ``launch-control``
and ``--check`` refuses until a person has classified them. See docs/security.md,
"The environment the host reads", for how to review.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import envscan  # noqa: E402  (tools/ is not a package)

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "pytest_skill_eval" / "host" / "env-names.json"
EXTENSIONS = ROOT / "pytest_skill_eval" / "host" / "extensions"
SECTIONS = {"name": "names", "prefix": "prefixes", "suffix": "suffixes", "unresolved": "constructions"}
CLASSES = ("launch-control", "reserved", "safe")
FOUND_SHOWN = 6
HOW_TO_REVIEW = (
    "Review it: run `.venv/bin/python tools/scan_host_env.py --write`, then give each new entry of "
    "pytest_skill_eval/host/env-names.json a class (launch-control / reserved / safe) and a reason, or for a "
    "construction a 'reads' note and the names or families it covers (docs/security.md, 'The environment the "
    "host reads', says how)."
)

Scan = dict[str, dict[str, set[str]]]  # section -> key -> locations


def _package_of(relative: Path) -> str:
    parts = relative.parts
    last = max((i for i, part in enumerate(parts) if part == "node_modules"), default=-1)
    rest = parts[last + 1 :]
    if not rest:
        return "?"
    return "/".join(rest[:2]) if rest[0].startswith("@") and len(rest) > 1 else rest[0]


def _sources(node_modules: Path) -> list[tuple[str, str]]:
    """(location, text) of every JavaScript file the host can load, plus the evaluator's extensions."""
    out = []
    for path in sorted(node_modules.rglob("*")):
        if path.suffix in (".js", ".mjs", ".cjs") and path.is_file():
            relative = path.relative_to(node_modules)
            package = _package_of(Path("node_modules") / relative)
            inner = str(relative).split(f"{package}/", 1)[-1]
            out.append((f"{package}: {inner}", path.read_text(encoding="utf-8", errors="replace")))
    for path in sorted(EXTENSIONS.glob("*.mjs")):
        out.append((f"pytest-skill-eval: host/extensions/{path.name}", path.read_text(encoding="utf-8")))
    return out


def scan_texts(sources: Iterable[tuple[str, str]]) -> Scan:
    """Scan (location, text) pairs: readers and constants are shared across files first."""
    texts = [(loc, text) for loc, text in sources if "env" in text.lower()]
    readers: set[str] = set()
    constants: dict[str, set[envscan.Read]] = defaultdict(set)
    for _, text in texts:
        readers |= {name for name in envscan.reader_functions(text) if len(name) >= 3}
        for key, values in envscan.string_constants(text).items():
            constants[key] |= values
    texts = [(loc, text) for loc, text in texts if "env" in text]
    scan: Scan = {section: defaultdict(set) for section in SECTIONS.values()}
    for location, text in texts:
        for read, _excerpt in envscan.scan_source(text, readers, constants):
            if read.kind == "unresolved":
                key = f"{location.split(':')[0]}: {read.value}"
            elif re.fullmatch(r"[A-Za-z0-9_]+", read.value):
                key = read.value.upper()
            else:
                continue  # "ProgramFiles(x86)", "https:_proxy": no definition can name it
            scan[SECTIONS[read.kind]][key].add(location)
    return scan


def node_help_names(node: Path) -> set[str]:
    """The environment variables the pinned node lists in ``node --help``."""
    text = subprocess.run([str(node), "--help"], capture_output=True, text=True, check=True, timeout=60).stdout
    section = text.split("Environment variables:", 1)[-1]
    return {line.split()[0] for line in section.splitlines() if line[:1].isupper() and line.split()[0].isupper()}


def scan_host(node_modules: Path) -> Scan:
    scan = scan_texts(_sources(node_modules))
    node = next((p for p in sorted(node_modules.glob("node/**/bin/node")) if p.is_file()), None)
    if node is not None:
        for name in node_help_names(node):
            scan["names"][name].add("node: node --help")
    return scan


def _shown(locations: set[str]) -> list[str]:
    ordered = sorted(locations)
    extra = len(ordered) - FOUND_SHOWN
    return ordered[:FOUND_SHOWN] + ([f"... and {extra} more"] if extra > 0 else [])


def problems(scan: Scan, table: dict[str, Any]) -> list[str]:
    """Why *table* does not describe *scan* (empty: it does)."""
    out = []
    for section in SECTIONS.values():
        entries = table.get(section, {})
        for key in sorted(scan[section]):
            if key not in entries:
                where = ", ".join(_shown(scan[section][key])[:3])
                out.append(f"{section}: the host reads {key!r} (found in {where}), which the table does not list")
        for key, entry in sorted(entries.items()):
            if "found" in entry and key not in scan[section]:
                out.append(f"{section}: {key!r} is no longer read by the host (listed as found in {entry['found'][:2]})")
            if section != "constructions" and entry.get("class") not in CLASSES:
                out.append(f"{section}: {key!r} has class {entry.get('class')!r}; expected one of {', '.join(CLASSES)}")
            if not entry.get("reason" if section != "constructions" else "reads"):
                out.append(f"{section}: {key!r} has no reviewed {'reason' if section != 'constructions' else 'reads note'}")
    return out


def merged(scan: Scan, table: dict[str, Any]) -> dict[str, Any]:
    """*table* brought up to *scan*: found lists refreshed, new entries unreviewed, stale ones dropped."""
    out: dict[str, Any] = {k: v for k, v in table.items() if k not in SECTIONS.values()}
    for section in SECTIONS.values():
        old = table.get(section, {})
        new: dict[str, Any] = {}
        for key in sorted(set(scan[section]) | {k for k, e in old.items() if "found" not in e}):
            entry = dict(old.get(key, {}))
            if key in scan[section]:
                entry["found"] = _shown(scan[section][key])
            if section == "constructions":
                entry.setdefault("reads", "")
            else:
                entry.setdefault("class", "unreviewed")
                entry.setdefault("reason", "")
            new[key] = {k: entry[k] for k in sorted(entry, key=_field_order)}
        out[section] = new
    return out


def _field_order(field: str) -> tuple[int, str]:
    return (["class", "reason", "reads", "readers", "found"].index(field) if field in
            ("class", "reason", "reads", "readers", "found") else 9, field)


def _default_node_modules() -> Path:
    sys.path.insert(0, str(ROOT))
    from pytest_skill_eval.host.install import resolve_host

    cli = resolve_host(install_if_missing=False).cli
    return next(p for p in cli.parents if p.name == "node_modules")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when the table does not describe the host")
    mode.add_argument("--write", action="store_true", help="refresh the table (new entries are 'unreviewed')")
    parser.add_argument("--host", type=Path, help="the host's node_modules (default: the managed pi install)")
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    node_modules = args.host or _default_node_modules()
    scan = scan_host(node_modules)
    table = json.loads(args.table.read_text(encoding="utf-8")) if args.table.exists() else {}
    if args.write:
        args.table.write_text(json.dumps(merged(scan, table), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.table}; now review every 'unreviewed' class and empty reason")
        return 0
    found = problems(scan, table)
    for line in found:
        print(line)
    if found:
        print(HOW_TO_REVIEW)
        return 1
    print(f"{args.table.name} describes every environment read of {node_modules}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
