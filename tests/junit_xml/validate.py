"""Validate a JUnit XML file against the vendored schema of its JUnit family (see schemas/README.md)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import xmlschema

SCHEMAS = Path(__file__).parent / "schemas"
#: pytest's ``junit_family`` values and the schema each is checked against
FAMILY_SCHEMA = {"xunit2": "junit-10.xsd", "xunit1": "junit-9.xsd", "legacy": "junit-9.xsd"}


@cache
def schema(family: str) -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(SCHEMAS / FAMILY_SCHEMA[family])


def schema_errors(xml_path: Path, family: str) -> list[str]:
    """Every reason *xml_path* is not valid under *family*'s schema (empty when valid)."""
    return [f"{error.path}: {error.reason}" for error in schema(family).iter_errors(str(xml_path))]
