"""Search algorithms. They know nothing of any family: breadth-first search sees a
:class:`~puzzlespace.contracts.PuzzleRules`, IDA* an :class:`~puzzlespace.contracts.IDAProblem`."""
