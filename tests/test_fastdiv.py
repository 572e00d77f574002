"""Division by run-time constants (multiply and shift) against Python's ``//``."""

import numba as nb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzlespace.fastdiv import divisor, mul_shift


@nb.njit(cache=True)
def _quotients(xs, m, s):
    out = np.empty_like(xs)
    for j in range(xs.shape[0]):
        out[j] = mul_shift(xs[j], m, s)
    return out


@settings(deadline=None)
@given(st.integers(1, 10**7), st.integers(1, 2**62), st.data())
def test_divisor_is_exact_below_its_bound(d, bound, data):
    m, s = divisor(d, bound)
    xs = [0, bound - 1, min(d, bound - 1), (bound - 1) // d * d, max(0, (bound - 1) // d * d - 1)]
    xs += data.draw(st.lists(st.integers(0, bound - 1), max_size=50))
    xs = np.array(xs, dtype=np.int64)
    assert _quotients(xs, m, s).tolist() == [x // d for x in xs.tolist()]


def test_divisor_every_small_dividend():
    for d in (1, 2, 3, 7, 12, 14, 120, 5040):
        xs = np.arange(40320, dtype=np.int64)
        assert np.array_equal(_quotients(xs, *divisor(d, 40320)), xs // d)


def test_divisor_refuses_nonsense():
    with pytest.raises(ValueError):
        divisor(0, 10)
    with pytest.raises(ValueError):  # no multiplier below 2**63 for 15 up to that bound
        divisor(15, 7 * 10**18)
