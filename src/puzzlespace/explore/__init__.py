"""Complete breadth-first enumeration of a puzzle's state space (see :func:`explore`)."""

from .engine import ExploreResult, explore

__all__ = ["ExploreResult", "explore"]
