"""Holm against a table computed by hand; Benjamini-Hochberg against scipy's ``false_discovery_control``."""

from __future__ import annotations

import random

import pytest
from scipy import stats

from pytest_skill_eval.decision import ADJUSTMENTS, adjust, benjamini_hochberg, holm

# p-values in the given (unsorted) order and Holm's adjustment by hand:
# sorted 0.01, 0.02, 0.03, 0.04, 0.5 (m = 5) -> 5*0.01 = 0.05, 4*0.02 = 0.08, 3*0.03 = 0.09,
# 2*0.04 = 0.08 -> raised to 0.09 (step-down is monotone), 1*0.5 = 0.5
HOLM = [
    ([0.04, 0.01, 0.5, 0.03, 0.02], [0.09, 0.05, 0.5, 0.09, 0.08]),
    # 3*0.001 = 0.003, 2*0.2 = 0.4, 1*0.3 = 0.3 -> 0.4
    ([0.3, 0.001, 0.2], [0.4, 0.003, 0.4]),
    # capped at 1: 2*0.6 = 1.2 -> 1, then 0.7 -> 1
    ([0.6, 0.7], [1.0, 1.0]),
    # ties: 3*0.01 = 0.03 for both tied values (the second 2*0.01 = 0.02 is raised to 0.03)
    ([0.01, 0.01, 0.04], [0.03, 0.03, 0.04]),
    ([0.2], [0.2]),
    # the ends of the range are p-values: 0 stays 0, 1 stays 1
    ([0.0, 1.0, 0.02], [0.0, 1.0, 0.04]),
    ([], []),
]


@pytest.mark.parametrize(("raw", "adjusted"), HOLM)
def test_holm_matches_the_hand_computed_table(raw: list[float], adjusted: list[float]) -> None:
    assert holm(raw) == pytest.approx(adjusted, rel=1e-12)
    assert adjust(raw, "holm") == pytest.approx(adjusted, rel=1e-12)


def test_bh_matches_scipy_false_discovery_control() -> None:
    rng = random.Random(1995)
    for m in range(1, 40):
        for _ in range(5):
            raw = [rng.random() ** rng.choice([1, 3, 6]) for _ in range(m)]
            if rng.random() < 0.3:
                raw[: m // 2] = [raw[0]] * (m // 2)  # ties
            expected = stats.false_discovery_control(raw, method="bh")
            assert benjamini_hochberg(raw) == pytest.approx(list(expected), rel=1e-12)


def test_adjustments_keep_order_stay_valid_and_rank_like_the_raw_values() -> None:
    rng = random.Random(11)
    for _ in range(200):
        raw = [rng.random() for _ in range(rng.randint(1, 15))]
        for method in ADJUSTMENTS:
            adjusted = adjust(raw, method)
            assert len(adjusted) == len(raw)
            assert all(p <= q <= 1.0 for p, q in zip(raw, adjusted, strict=True))
            order = sorted(range(len(raw)), key=raw.__getitem__)
            assert all(adjusted[i] <= adjusted[j] for i, j in zip(order, order[1:], strict=False))
        # holm is never less strict than bh
        assert all(b <= h for b, h in zip(benjamini_hochberg(raw), holm(raw), strict=True))
    assert adjust([0.3, 0.01], "none") == (0.3, 0.01)
    assert adjust([0.0, 1.0], "none") == (0.0, 1.0)
    assert benjamini_hochberg([0.0, 1.0, 0.02]) == pytest.approx(
        list(stats.false_discovery_control([0.0, 1.0, 0.02], method="bh")), rel=1e-12)


def test_bad_input_is_refused_with_what_was_found() -> None:
    with pytest.raises(ValueError, match=r"p-value 1: expected a number from 0 to 1, found 1\.5"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match="p-value 0: .*found nan"):
        benjamini_hochberg([float("nan")])
    with pytest.raises(ValueError, match="unknown adjustment 'bonferroni'; expected one of holm, bh, none"):
        adjust([0.1], "bonferroni")  # type: ignore[arg-type]
    assert ADJUSTMENTS[0] == "holm"  # the default first
