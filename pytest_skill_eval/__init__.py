"""pytest-skill-eval: evaluate Agent Skills through the real pi coding-agent host.

PYTEST_DONT_REWRITE: the ``skill-eval`` command lives in this package, so the package is
imported before the command starts pytest. From a regular (non-editable) install pytest
marks a plugin's top-level package for assertion rewriting and, finding it imported
already, would warn that it cannot rewrite it. This package is the evaluator, not test
code: its asserts need no rewriting, and the marker above tells pytest so.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
