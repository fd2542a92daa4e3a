"""The only module that imports from pytest's private ``_pytest`` package, and why.

pytest has no public API for these; each is used to agree with pytest's own behaviour
exactly, which a copy would stop doing when pytest changes. pyproject pins the pytest
range these were checked against; an upgrade that moves one fails at import, here.

- ``determine_setup`` (``_pytest.config.findpaths``): pytest's rootdir and ini-file choice.
  ``plugin.hooks.separate_path_option_problem`` redoes that choice with and without the
  values of the separate-argument path options, to say when such a value moved the rootdir
  (pytest makes that choice before any plugin option is known; no hook can change it).
- ``bin_xml_escape``, ``mangle_test_address`` and ``xml_key`` (``_pytest.junitxml``): how
  pytest's JUnit writer escapes text, turns a node id into ``classname``/``name`` and keys
  its XML stash. ``plugin.junit`` rewrites the file that writer produced, and must escape
  and name exactly as it does.
"""

from __future__ import annotations

from _pytest.config.findpaths import determine_setup
from _pytest.junitxml import bin_xml_escape, mangle_test_address, xml_key

__all__ = ["bin_xml_escape", "determine_setup", "mangle_test_address", "xml_key"]
