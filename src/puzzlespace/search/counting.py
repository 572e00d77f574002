"""What a compiled depth-first pass tells the IDA* driver as it runs, through the control
array of :mod:`puzzlespace.search.ida`: the nodes it has generated, and whether to stop."""

from __future__ import annotations

import numba as nb

from .ida import NODES, STOP

#: Nodes a pass generates between two looks at the control array.
EVERY = 4096


@nb.njit(cache=True, nogil=True, inline="always")
def counted(generated, ctl):
    """One more node generated, ``generated`` of them not yet added to ``ctl``: every
    :data:`EVERY` nodes they are added (the driver shows them as the pass goes) and a
    stop request is read. Returns the nodes not yet added and whether to stop."""
    generated += 1
    if generated & (EVERY - 1) == 0:
        ctl[NODES] += generated
        return 0, ctl[STOP] != 0
    return generated, False
