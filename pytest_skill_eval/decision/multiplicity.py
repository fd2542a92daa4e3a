"""Adjusting the p-values of a family of comparisons (pure).

- ``holm``: Holm's step-down adjustment (Holm 1979), which controls the family-wise error
  rate at alpha under any dependence: the i-th smallest of m p-values becomes
  ``max over j <= i of min(1, (m - j + 1) * p_(j))``.
- ``bh``: Benjamini and Hochberg's step-up adjustment (1995), which controls the false
  discovery rate for independent or positively dependent tests: the i-th smallest becomes
  ``min over j >= i of min(1, m / j * p_(j))`` (monotone by construction).
- ``none``: the raw p-values.

Each function returns the adjusted values in the order it was given them; "significant"
then means adjusted p <= alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

__all__ = ["ADJUSTMENTS", "Adjustment", "adjust", "benjamini_hochberg", "holm"]

Adjustment = Literal["holm", "bh", "none"]
#: the adjustments ``--skill-eval-adjust`` accepts, the default first
ADJUSTMENTS: tuple[Adjustment, ...] = get_args(Adjustment)


def check_p_values(p_values: Sequence[float]) -> None:
    for i, p in enumerate(p_values):
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"p-value {i}: expected a number from 0 to 1, found {p!r}")


def holm(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm's step-down adjusted p-values, in the given order."""
    check_p_values(p_values)
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):  # rank 0 is the smallest p-value: multiplied by m
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return tuple(adjusted)


def benjamini_hochberg(p_values: Sequence[float]) -> tuple[float, ...]:
    """Benjamini-Hochberg step-up adjusted p-values (monotone), in the given order."""
    check_p_values(p_values)
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):  # from the largest p-value down
        i = order[rank]
        running = min(running, min(1.0, p_values[i] * (m / (rank + 1))))
        adjusted[i] = running
    return tuple(adjusted)


def adjust(p_values: Sequence[float], method: Adjustment) -> tuple[float, ...]:
    """The p-values adjusted by *method* (``holm``, ``bh`` or ``none``), in the given order."""
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        check_p_values(p_values)
        return tuple(p_values)
    raise ValueError(f"unknown adjustment {method!r}; expected one of {', '.join(ADJUSTMENTS)}")
