"""Division by a number fixed at run time, as a multiply and a shift (for compiled loops).

``divisor(d, bound)`` gives ``(M, S)`` such that ``mul_shift(x, M, S) == x // d`` for every
``0 <= x < bound`` (checked when it is made): about 4 cycles against 10-40 for an
integer division.
"""

from __future__ import annotations

from llvmlite import ir
import numba as nb
from numba.core import types
from numba.extending import intrinsic


def divisor(d: int, bound: int) -> tuple[int, int]:
    """``(M, S)`` with ``(x * M) >> S == x // d`` for all ``0 <= x < bound``.

    With ``M = ceil(2**S / d)`` and ``e = M * d - 2**S``, ``x * M / 2**S = x / d + x e / (d 2**S)``;
    the floor is exact when ``(bound - 1) * e < 2**S`` (then the error never reaches the
    next multiple of ``d``). The smallest such ``S`` is taken; ``x * M`` stays below
    ``2**128``. ``M`` must fit a signed 64-bit integer: for bounds near ``2**63`` some
    divisors have none (e.g. 15 below ``7 * 10**18``), and ``ValueError`` says so.
    """
    if d < 1 or bound < 1:
        raise ValueError(f"divisor needs d >= 1 and bound >= 1, got {d}, {bound}")
    s = 0
    while True:
        m = -(-(1 << s) // d)
        if (bound - 1) * (m * d - (1 << s)) < (1 << s):
            break
        s += 1
    if (bound - 1) * m >= 1 << 128 or m >= 1 << 63 or s > 127:
        raise ValueError(f"no 128-bit multiply-and-shift divides by {d} below {bound}")
    return m, s


@intrinsic
def _mul_shift128(typingctx, x, m, s):
    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        a, b, c = (builder.zext(v, wide) for v in args)
        return builder.trunc(builder.lshr(builder.mul(a, b), c), ir.IntType(64))

    return types.int64(types.int64, types.int64, types.int64), codegen


@nb.njit(cache=True, nogil=True, inline="always")
def mul_shift(x, m, s):
    """``(x * m) >> s`` computed on 128 bits, for ``x, m >= 0`` (see :func:`divisor`)."""
    return _mul_shift128(x, m, s)
