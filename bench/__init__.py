"""puzzlespace's benchmarks: ``python -m bench LIST`` lists the suites, ``python -m bench NAME
[ARGS...]`` runs one (from the repository root). See ``bench/__main__.py``."""
