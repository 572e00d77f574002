"""Search algorithms. They know nothing of any family: they see a :class:`~puzzlespace.families.base.Puzzle`
(moves/apply) or the arrays of a :class:`~puzzlespace.search.ida.TokenSearchProblem`."""
