"""Complete breadth-first enumeration of a puzzle's state space (see :func:`explore`).

The engine (and numba with it) is imported on first use, so that light modules of this
package, such as :mod:`puzzlespace.cache`, cost nothing at start-up.
"""

__all__ = ["ExploreResult", "explore"]


def __getattr__(name):
    if name in __all__:
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
