"""The renderers' name for :mod:`pytest_skill_eval.safe_text`: untrusted text made safe to print.

The function lives in the core's bottom layer so grading and the outcome policy, which
``render`` builds on, can use the same one.
"""

from __future__ import annotations

from pytest_skill_eval.safe_text import escape_path, neutralise

__all__ = ["escape_path", "neutralise"]
