"""Validate a JUnit XML file against the schema of its JUnit family.

The xunit2 schema is ``junit-10.xsd``, the one pytest's ``junitxml`` names and checks its own
output against in its test suite; it ships in pytest's source distribution
(``testing/example_scripts/junit-10.xsd``), which the tests fetch once from the package index
for the installed pytest version and keep in the cache, so nothing is copied into this
repository. xunit1 (alias ``legacy``) differs in two testcase attributes, ``file`` and
``line``; its schema here is pytest's ``junit-10.xsd`` with those two attributes allowed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from functools import cache
from pathlib import Path

import pytest
import xmlschema

from pytest_skill_eval.host.install import cache_dir

_TESTCASE = '<xs:element name="testcase">'
_CLASSNAME = '<xs:attribute name="classname" type="xs:string"/>'


def _pytest_xsd() -> Path:
    version = pytest.__version__
    target = cache_dir() / "junit-schemas" / f"pytest-{version}" / "junit-10.xsd"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        fetched = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", tmp,
             f"pytest=={version}"], capture_output=True, text=True, timeout=300)
        sdists = list(Path(tmp).glob("pytest-*.tar.gz"))
        if fetched.returncode != 0 or not sdists:
            message = (f"pytest {version}'s source distribution (for junit-10.xsd) could not be fetched: "
                       f"{fetched.stderr[-300:]}")
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        with tarfile.open(sdists[0]) as tar:
            member = tar.extractfile(f"pytest-{version}/testing/example_scripts/junit-10.xsd")
            assert member is not None
            data = member.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".tmp")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def _xunit1_xsd(xunit2: Path) -> Path:
    text = xunit2.read_text(encoding="utf-8")
    start = text.index(_TESTCASE)
    at = text.index(_CLASSNAME, start) + len(_CLASSNAME)
    derived = (text[:at] + '\n            <xs:attribute name="file" type="xs:string"/>'
               '\n            <xs:attribute name="line" type="xs:string"/>' + text[at:])
    target = xunit2.with_name("junit-10-xunit1.xsd")
    target.write_text(derived, encoding="utf-8")
    return target


@cache
def schema(family: str) -> xmlschema.XMLSchema:
    xunit2 = _pytest_xsd()
    return xmlschema.XMLSchema(xunit2 if family == "xunit2" else _xunit1_xsd(xunit2))


def schema_errors(xml_path: Path, family: str) -> list[str]:
    """Every reason *xml_path* is not valid under *family*'s schema (empty when valid)."""
    return [f"{error.path}: {error.reason}" for error in schema(family).iter_errors(str(xml_path))]
