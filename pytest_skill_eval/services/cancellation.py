"""Whether a KeyboardInterrupt pytest reports is the user's Ctrl-C.

The plugin's session end and ``skill-eval run`` (which runs pytest in-process) decide the
same way whether a stop was a cancellation.
"""

from __future__ import annotations

import pytest


def is_cancellation(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt pytest reports is the user's Ctrl-C.

    pytest stops after collection errors with its own ``Session.Interrupted``, and
    pytest-xdist reports its ``-x``/``--maxfail`` stop as a KeyboardInterrupt of its own
    whose message is not its ``keyboard-interrupt``; neither is a cancellation.
    """
    if isinstance(exc, pytest.Session.Interrupted):
        return False
    return not (type(exc).__module__.startswith("xdist.") and "keyboard-interrupt" not in str(exc))
