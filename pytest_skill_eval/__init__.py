"""pytest-skill-eval: evaluate Agent Skills through the real pi coding-agent host."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
