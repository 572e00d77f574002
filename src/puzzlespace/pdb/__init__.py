"""Disjoint additive pattern databases for token puzzles (sliding, jump, graph).

- :mod:`.space`: the abstract space of a tile group and its compiled BFS (run by the
  explore engine), minimal k-of-n placement ranks;
- :mod:`.store`: the database files in the cache (header, checksum, 4/8-bit entries);
- :mod:`.heuristic`: ``pdb:...`` names, default partitions, symmetry views, and the
  search problem for :mod:`puzzlespace.pdb.search`.
"""
