"""Shared helpers for the definitions tests: the spec's examples and JSON-pointer edits."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

VALID = Path(__file__).parent / "valid"

#: Marks a JSON-pointer edit that deletes the addressed field or item.
DELETE = object()

#: Base documents by short name; each is one of the spec's examples (see valid/).
BASES = {
    "common": "spec-common-shape.json",
    "description": "spec-description.json",
    "body": "spec-body.json",
    "runtime": "spec-runtime.json",
    "suite": "spec-suite.json",
}


def spec_doc(name: str) -> dict[str, Any]:
    """A fresh copy of one base document."""
    doc: dict[str, Any] = json.loads((VALID / BASES[name]).read_text(encoding="utf-8"))
    return copy.deepcopy(doc)


def apply_edits(doc: Any, edits: dict[str, Any]) -> Any:
    """Apply ``{pointer: value}`` edits in order; ``DELETE`` removes, a final ``-`` appends."""
    for pointer, value in edits.items():
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        node = doc
        for token in tokens[:-1]:
            node = node[int(token)] if isinstance(node, list) else node[token]
        last = tokens[-1]
        if isinstance(node, list):
            if last == "-":
                node.append(value)
            elif value is DELETE:
                del node[int(last)]
            else:
                node[int(last)] = value
        elif value is DELETE:
            del node[last]
        else:
            node[last] = value
    return doc


def write_json(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_suite_tree(root: Path) -> Path:
    """The spec's suite example under *root*, with both of its group files present."""
    natural = spec_doc("description")
    body = spec_doc("body")
    body["id"] = "body-behavior"
    write_json(root / "groups" / "natural-activation.json", natural)
    write_json(root / "groups" / "body-behavior.json", body)
    return write_json(root / "suite.json", spec_doc("suite"))
