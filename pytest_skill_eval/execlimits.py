"""What ``execve`` takes: the kernel's limits on the host's argv and environment (pure).

Linux refuses, with E2BIG, any one argv or environment string of ``MAX_ARG_STRLEN``
bytes or more (its closing NUL counted), and an argv plus environment whose strings and
pointers together pass ``ARG_MAX`` (a quarter of the stack limit, never more than 6 MiB:
``bprm_stack_limits``); no string can hold a NUL, since execve ends each at its first NUL.
The loader refuses a definition string that could never pass (:mod:`.definitions.launchable`),
the launch layer sends a prompt that is no argument over RPC instead, and the driver turns
any refusal left into the variant's ``infrastructure-failed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["MAX_ARG_STRLEN", "MAX_EXEC_TOTAL", "exec_size", "exec_string_size", "fits_one_exec_string"]

#: The kernel's limit on one argv or environment string, its closing NUL included
#: (Linux ``MAX_ARG_STRLEN``, 32 pages of 4 KiB).
MAX_ARG_STRLEN = 32 * 4096

#: The most argv and environment any Linux ``execve`` takes, whatever the stack limit:
#: three quarters of ``_STK_LIM`` (8 MiB).
MAX_EXEC_TOTAL = 6 * 1024 * 1024

_POINTER = 8


def exec_string_size(text: str) -> int:
    """Bytes *text* takes as one argv or environment string: its UTF-8 and the closing NUL."""
    return len(text.encode("utf-8", "surrogateescape")) + 1


def fits_one_exec_string(text: str) -> bool:
    """Whether *text* can be one argv or environment string: no NUL, at most :data:`MAX_ARG_STRLEN`
    bytes with its NUL."""
    return "\x00" not in text and exec_string_size(text) <= MAX_ARG_STRLEN


def exec_size(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """Bytes ``execve`` counts against ``ARG_MAX``: the file name (``argv[0]``, an absolute path
    here), every argv and ``NAME=value`` string with its NUL, and one pointer per string
    (measured equal at the boundary with a real ``execve``)."""
    strings = [*argv[:1], *argv, *(f"{name}={value}" for name, value in env.items())]
    pointers = max(len(argv), 1) + len(env)
    return sum(exec_string_size(s) for s in strings) + _POINTER * pointers
