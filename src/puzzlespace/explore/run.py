"""How an exploration runs: in memory, by segments (one in memory at a time, the others
in files) or on a Dask cluster, as asked and as the memory it may take allows.

:func:`plan_exploration` checks that what is asked goes together and chooses how the
run goes (an :class:`ExplorationPlan`); :meth:`ExplorationPlan.run` runs it;
:func:`explore_puzzle` does both. Refusals are :class:`~puzzlespace.errors.PuzzleError`;
they and the plan's notes name the options of ``puzzlespace explore`` that the
parameters are (``out``: ``--out``, ``max_memory``: ``--max-memory``, ``save``:
``--save``...), since that is where most of them are read. Nothing here prints: lines
go to the caller's ``said`` and ``log``.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Optional

from .. import resources  # its current_rss looked up when called: a test may fix it
from ..contracts import PuzzleRules as Puzzle
from ..errors import PuzzleError
from ..resources import human
from . import checkpoint, engine
from .engine import ExploreResult

#: How a run goes: the whole table in memory, by segments in one process, on a Dask cluster.
MODES = ("memory", "segments", "cluster")
#: Positions from which a fresh run in memory has its time estimated (:meth:`ExplorationPlan.estimate_note`).
ESTIMATE_FROM = 10_000_000

Say = Optional[Callable[[str], None]]


@dataclass(frozen=True)
class ExplorationPlan:
    """How an exploration of ``puzzle`` runs.

    ``mode``: one of :data:`MODES`. ``segments``: those asked of the run (the ranks may
    make fewer: the notes say so); 0 in memory; None where the run keeps a resumed
    checkpoint's, or on a cluster has one a worker. ``workers``: the worker processes
    started on this machine (None: none, or the cluster at ``scheduler``), with
    ``threads`` threads (None: all cores) and ``worker_memory`` bytes (None: the
    machine's shared out) each. ``starting``: what is said as the run starts (a choice
    made for the caller); ``under_way``: what is said once it is under way (what was
    asked and is adjusted), so that a run refused before it starts says only why.
    """

    puzzle: Puzzle
    mode: str
    segments: Optional[int]
    out: Optional[Path] = None
    resume: bool = False
    threads: Optional[int] = None
    max_memory: Optional[int] = None
    marks: str = "packed"
    tablebase: bool = False
    workers: Optional[int] = None
    scheduler: Optional[str] = None
    worker_memory: Optional[int] = None
    starting: tuple[str, ...] = ()
    under_way: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """Every line the plan says, in the order a run says them."""
        return self.starting + self.under_way

    def estimate_note(self) -> Optional[str]:
        """How long this run takes here, for a fresh run in memory of :data:`ESTIMATE_FROM`
        positions or more (from a probe of the engine, calibrated once a machine: see
        :func:`~puzzlespace.explore.estimate.exploration_estimate`); None otherwise."""
        from .estimate import exploration_estimate

        p = self.puzzle
        if self.mode != "memory" or self.resume:
            return None
        positions = p.reachable_count() or p.state_index().size
        if positions < ESTIMATE_FROM:
            return None
        estimate = exploration_estimate(p, self.threads or os.cpu_count() or 1)
        return None if estimate is None else f"exploring {p.spec}: {positions:,} positions, {estimate} on this machine"

    def run(self, *, save: Optional[Path] = None, counts: bool = False, antipode_limit: int = 100,
            force: bool = False, progress=None, layer_done=None, said: Say = None, log: Say = None,
            estimate: bool = False) -> ExploreResult:
        """Run the exploration, holding the write locks of ``out`` and ``save`` (another
        run of either is refused); ``save``: write the tablebase there as it ends (the plan
        must keep it: ``tablebase``), and with ``counts`` every position's number of
        optimal paths beside it (:func:`~puzzlespace.explore.pathcounts.record`). ``said(line)``: the notes, with ``estimate`` the
        :meth:`estimate_note` (a probe: where the time it takes is worth it), and where the
        tablebase is written; ``log(line)``: on a cluster, its workers as the run starts
        and a line a layer. ``progress`` and ``layer_done`` as
        :func:`~puzzlespace.explore.cluster.explore_distributed` takes them (``layer_done``
        on a cluster only); ``antipode_limit`` and ``force`` as
        :func:`~puzzlespace.explore.engine.explore` does."""
        from ..datafile import locked

        say = said or (lambda line: None)
        with ExitStack() as held:
            if self.out is not None:
                held.enter_context(locked(self.out, "the checkpoint in", directory=True))
            if save is not None:
                held.enter_context(locked(save, "the tablebase"))
            for line in self.starting + ((self.estimate_note(),) if estimate else ()):
                if line is not None:
                    say(line)
            options = dict(antipode_limit=antipode_limit, force=force,
                           progress=_saying_first(self.under_way, progress, said))
            if self.mode == "cluster":
                result = self._on_cluster(layer_done=layer_done, log=log, **options)
            elif self.mode == "segments":
                from .segments import explore_segmented

                result = explore_segmented(self.puzzle, segments=self.segments or 0,  # 0: the checkpoint's
                                           threads=self.threads, out_dir=self.out, resume=self.resume,
                                           keep_table=self.tablebase, marks=self.marks, **options)
            else:
                result = engine.explore(self.puzzle, threads=self.threads, out_dir=self.out, resume=self.resume,
                                        max_memory=self.max_memory, keep_table=self.tablebase, **options)
            if save is not None:
                save_tablebase(self.puzzle, result, save)
                say(f"tablebase written to {save}")
            if counts:
                from .pathcounts import record

                say(f"optimal path counts written to {record(self.puzzle, save, self.max_memory)}")
        return result

    def _on_cluster(self, *, layer_done, log: Say, **options) -> ExploreResult:
        """Explore on a new cluster of :attr:`workers` processes on this machine, or on the
        one at :attr:`scheduler`."""
        from . import cluster, dask_cluster

        dask_cluster.dask_logs_off()
        if self.workers is not None:
            connect = dask_cluster.local_cluster(self.workers, self.threads, self.worker_memory, puzzle=self.puzzle)
        else:
            connect = dask_cluster.remote_cluster(self.scheduler)

        def reported(r: cluster.LayerReport) -> None:
            if log is not None:
                log(layer_line(r))
            if layer_done is not None:
                layer_done(r)

        with connect as client:
            if log is not None:
                log(f"Dask cluster: {dask_cluster.describe_workers(client)}")
            return cluster.explore_distributed(self.puzzle, client, segments=self.segments, out_dir=self.out,
                                               resume=self.resume, keep_table=self.tablebase, layer_done=reported,
                                               **options)


def plan_exploration(puzzle: Puzzle, *, out=None, resume: bool = False, max_memory: Optional[int] = None,
                     segments: Optional[int] = None, workers: Optional[int] = None, scheduler: Optional[str] = None,
                     threads: Optional[int] = None, marks: str = "packed", tablebase: bool = False) -> ExplorationPlan:
    """How an exploration of ``puzzle`` runs (see :class:`ExplorationPlan`).

    In memory, unless: ``workers`` (a new cluster of that many processes here, no more
    than the run has segments) or ``scheduler`` (a running cluster's address) ask for a
    cluster; ``segments`` (with ``out``) asks for that many; ``resume`` continues the
    checkpoint in ``out`` as it was made; or the table does not fit ``max_memory``
    (bytes) and ``out`` can hold the segments, in as few as fit. ``threads``: this
    process's, or each new worker's; ``marks``: how a run by segments keeps its marks
    (``"packed"`` or ``"bitmap"``, see :data:`~puzzlespace.explore.segments.MARKS`);
    ``tablebase``: the run keeps one (counted in its memory). Raises PuzzleError when
    these do not go together, or the run cannot fit ``max_memory``.
    """
    out = Path(out) if out is not None else None
    check_options(out=out, resume=resume, max_memory=max_memory, segments=segments, workers=workers,
                  scheduler=scheduler, threads=threads, marks=marks)
    resumed = out if resume else None
    noted = segments_made(puzzle, segments, resumed) if segments else None
    plan = ExplorationPlan(puzzle, "memory", 0, out=out, resume=resume, threads=threads, max_memory=max_memory,
                           marks=marks, tablebase=tablebase, under_way=(noted,) if noted else ())
    if workers is not None or scheduler is not None:
        return _cluster_plan(plan, segments, workers, scheduler)
    return _one_process_plan(plan, segments)


def explore_puzzle(puzzle: Puzzle, *, out=None, resume: bool = False, max_memory: Optional[int] = None,
                   segments: Optional[int] = None, workers: Optional[int] = None, scheduler: Optional[str] = None,
                   threads: Optional[int] = None, marks: str = "packed", tablebase: bool = False,
                   save: Optional[Path] = None, counts: bool = False, antipode_limit: int = 100,
                   force: bool = False, progress=None, layer_done=None, said: Say = None, log: Say = None,
                   estimate: bool = False) -> ExploreResult:
    """Explore ``puzzle`` as :func:`plan_exploration` chooses, then as
    :meth:`ExplorationPlan.run` runs it; ``save`` keeps the tablebase (as ``tablebase``)
    and writes it there (``"cache"``: where solves find it), checked first
    (:func:`save_target`), with ``counts`` the optimal path counts beside it."""
    if counts and save is None:
        raise PuzzleError("the optimal path counts are kept beside a tablebase: give --save FILE (or cache) "
                          "with --counts")
    save = save_target(puzzle, save) if save is not None else None
    plan = plan_exploration(puzzle, out=out, resume=resume, max_memory=max_memory, segments=segments,
                            workers=workers, scheduler=scheduler, threads=threads, marks=marks,
                            tablebase=tablebase or save is not None)
    return plan.run(save=save, counts=counts, antipode_limit=antipode_limit, force=force, progress=progress,
                    layer_done=layer_done, said=said, log=log, estimate=estimate)


def check_options(*, out: Optional[Path], resume: bool, max_memory: Optional[int], segments: Optional[int],
                  workers: Optional[int], scheduler: Optional[str], threads: Optional[int], marks: str) -> None:
    """Refuse what does not go together (PuzzleError), before anything is started."""
    on_cluster = workers is not None or scheduler is not None
    if workers is not None and scheduler is not None:
        raise PuzzleError("give --workers (a cluster on this machine) or --scheduler (a running one), not both")
    if segments and out is None and not on_cluster:
        raise PuzzleError("--segments keeps the segments in files: give --out DIR")
    if resume and out is None:
        raise PuzzleError(checkpoint.RESUME_NEEDS_OUT)
    if max_memory and scheduler is not None:
        raise PuzzleError("--max-memory shares this machine's memory out among the workers --workers starts; "
                          "those of --scheduler's cluster have the limits they were started with (dask worker "
                          "--memory-limit)")
    if threads and scheduler is not None:
        raise PuzzleError("--threads sets the threads of each worker --workers starts; those of --scheduler's "
                          "cluster have the threads they were started with (dask worker --nthreads)")
    if marks != "packed" and on_cluster:
        raise PuzzleError("--marks bitmap is for a run by segments in one process: a cluster's workers send "
                          "their marks packed")
    if marks != "packed" and out is None:
        raise PuzzleError("--marks bitmap is for a run by segments, in files: give --out DIR (with --segments N, "
                          "or --max-memory SIZE below the table)")
    if out is not None and out.exists() and not out.is_dir():
        raise PuzzleError(f"--out {str(out)!r} is a file; give a directory for the checkpoints")


def _cluster_plan(plan: ExplorationPlan, segments: Optional[int], workers: Optional[int],
                  scheduler: Optional[str]) -> ExplorationPlan:
    """``plan`` on a cluster: new workers, no more than the run's segments, each with its
    share of the machine's cores and of ``max_memory``; or the one at ``scheduler``. A
    resumed checkpoint must be one by segments."""
    from .dask_cluster import worker_memory
    from .segments import checkpoint_is_segmented

    p, out, notes, share = plan.puzzle, plan.out, plan.under_way, None
    if workers:
        workers, started = workers_to_start(p, workers, segments, out if plan.resume else None)
        notes += (started,) if started else ()
    if plan.resume:
        checkpoint.read_manifest(out, checkpoint.RERUN)
        if not checkpoint_is_segmented(out):
            raise PuzzleError(f"the checkpoint in {str(out)!r} was made without segments: resume it without "
                              "--workers or --scheduler")
    threads = plan.threads
    if workers is not None:
        threads = threads or max(1, (os.cpu_count() or 1) // workers)
        if plan.max_memory:
            share = worker_memory(plan.max_memory, workers, p.state_index().size, plan.tablebase and out is None)
    return replace(plan, mode="cluster", segments=segments, workers=workers, scheduler=scheduler, threads=threads,
                   worker_memory=share, under_way=notes)


def _one_process_plan(plan: ExplorationPlan, asked: Optional[int]) -> ExplorationPlan:
    """``plan`` in this process: by segments when it resumes a checkpoint made so (whose
    segments must fit ``max_memory``), when ``asked`` for (they must fit it with the
    marks kept as ``marks`` says), or when the table does not fit ``max_memory`` and
    ``out`` can hold the segments (said as the run starts); else in memory."""
    from .segments import check_resumed_memory, checkpoint_is_segmented, segments_to_fit

    p, out, limit = plan.puzzle, plan.out, plan.max_memory
    if out is None:
        return plan
    index, threads, tables = p.state_index(), plan.threads or os.cpu_count() or 1, 2 if plan.tablebase else 1
    if plan.resume:
        if not checkpoint_is_segmented(out):
            return plan
        if limit:
            check_resumed_memory(index, out, threads, tables, limit, plan.marks)
        return replace(plan, mode="segments", segments=None)
    if asked:
        fewest = segments_to_fit(index, threads, tables, limit, plan.marks) if limit else 1
        if fewest > asked:
            raise PuzzleError(f"--max-memory {human(limit)} needs {fewest} segments or more, not {asked}")
        return replace(plan, mode="segments", segments=asked)
    return _fitted(plan, index, threads, tables)


def _fitted(plan: ExplorationPlan, index, threads: int, tables: int) -> ExplorationPlan:
    """``plan`` in memory where the table fits ``max_memory``, else in as few segments as
    fit, saying why; refused where no number of segments fits."""
    from ..bits import table_bytes
    from .segments import memory_needed, segments_to_fit

    p, limit = plan.puzzle, plan.max_memory
    in_memory = resources.current_rss() + engine.plan(index, threads, True, tables).memory
    if limit is None or in_memory <= limit:
        return plan
    held = "table and tablebase" if tables == 2 else "table"
    taken = f"in memory it takes about {human(in_memory)}, its {held} {human(table_bytes(index.size) * tables)}"
    fixed = memory_needed(index, threads, tables, 0, plan.marks)
    if fixed >= limit:  # no number of segments helps: the program and its buffers alone do not fit
        raise PuzzleError(f"--max-memory {human(limit)} is too little for {p.spec}: {taken}, and in segments the "
                          f"program and its buffers alone take about {human(fixed)}; raise it")
    segments = segments_to_fit(index, threads, tables, limit, plan.marks)
    note = (f"{p.spec} does not fit --max-memory {human(limit)}: {taken}; exploring in {segments} segments, one "
            f"in memory at a time, the others in {str(plan.out)!r}")
    return replace(plan, mode="segments", segments=segments, starting=(note,))


def segments_of_run(p: Puzzle, asked: int, resumed: Optional[Path]) -> Optional[int]:
    """The segments of a run that asks for ``asked``: those of the checkpoint it resumes in
    ``resumed`` (0: it was made without; None where it cannot be read: the run says why),
    else those the ranks make."""
    from .segments import segment_bounds

    if resumed is None:
        return len(segment_bounds(p.state_index(), asked))
    try:
        return len(checkpoint.read_manifest(resumed, "").get("segments", []))
    except (PuzzleError, TypeError):
        return None


def _cut(p: Puzzle, made: int) -> str:
    """Why a run has ``made`` segments, not as many as asked."""
    from .segments import segment_align

    return (f"{p.spec}'s ranks, cut at multiples of {segment_align(p.state_index()):,}, make {made} "
            f"segment{'s' if made != 1 else ''}")


def segments_made(p: Puzzle, asked: int, resumed: Optional[Path]) -> Optional[str]:
    """What to say when a run is not in the ``asked`` number of segments (None if it is):
    the ranks make another number, or it resumes the checkpoint in ``resumed``, whose
    segments it keeps."""
    made = segments_of_run(p, asked, resumed)
    if made is None or made == asked:
        return None
    if resumed is not None:
        return (f"--segments {asked}: --resume keeps the checkpoint's {made} segments" if made else
                f"--segments {asked}: the checkpoint in {str(resumed)!r} was made without segments; --resume "
                "continues it so")
    return f"--segments {asked}: {_cut(p, made)}; exploring in {made}"


def workers_to_start(p: Puzzle, workers: int, segments: Optional[int], resumed: Optional[Path]
                     ) -> tuple[int, Optional[str]]:
    """How many of the ``workers`` asked for to start: no more than the run's segments
    (``segments`` asked for, else a worker each; or the checkpoint's in ``resumed``),
    since the others would hold none; and what to say when that is fewer."""
    made = segments_of_run(p, segments or workers, resumed)
    if not made or made >= workers:  # none: the run says what is wrong with its checkpoint
        return workers, None
    why = (f"the checkpoint has {made} segment{'s' if made != 1 else ''}" if resumed is not None else
           _cut(p, made) if segments is None else f"the run has {made} segment{'s' if made != 1 else ''}")
    return made, f"--workers {workers}: {why}; starting {made} worker{'s' if made != 1 else ''}"


def _saying_first(notes: tuple[str, ...], progress, said: Say):
    """The progress callback ``progress`` (or None), saying ``notes`` first, once the run
    is under way (its first report)."""
    if not notes or said is None:
        return progress
    pending = list(notes)

    def first(*args) -> None:
        while pending:
            said(pending.pop(0))
        if progress is not None:
            progress(*args)

    return first


def layer_line(r) -> str:
    """A cluster's layer (a :class:`~puzzlespace.explore.cluster.LayerReport`) in a line:
    its states, time, and the bytes sent between workers and the slowest of them."""
    states = f"{r.states:,} state{'s' if r.states != 1 else ''}"
    where = (f"{human(r.bytes_between_workers)} between workers, slowest {r.slowest_worker} "
             f"({r.slowest_seconds:.2f} s)" if r.slowest_worker is not None else "in this process")
    return f"layer {r.depth}: {states} in {r.seconds:.2f} s, {where}"


def saved_layer(out: Path) -> int:
    """The last layer whose checkpoint is intact in ``out`` (-1: none), as a run that
    stopped left it."""
    try:
        return int(checkpoint.read_manifest(out, "")["depth"])
    except (PuzzleError, KeyError, TypeError, ValueError):
        return -1


def save_target(p: Puzzle, save) -> Path:
    """Where ``save`` writes ``p``'s tablebase (``"cache"``: the cache's file for it),
    checked before the run: a file path, not named as lock files are, with room for it."""
    from ..cache import tablebase_path
    from ..resources import free_disk

    path = tablebase_path(p) if str(save) == "cache" else Path(save)
    if path.name.startswith(".") and path.name.endswith(".lock"):
        raise PuzzleError(f"--save {str(path)!r} is named as puzzlespace's lock files are (removed as a write "
                          "ends); choose another name")
    if path.is_dir():
        raise PuzzleError(f"--save {str(path)!r} is a directory; give a file name such as {str(path / 't.pstb')!r}")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise PuzzleError(f"--save {str(path)!r}: {str(parent)!r} is not a directory")
    need = (p.state_index().size + 3) // 4 + (1 << 16)
    if need > free_disk(parent):
        raise PuzzleError(f"the tablebase needs about {human(need)} of disk in {str(parent)!r} but only "
                          f"{human(free_disk(parent))} is free; choose another --save")
    return path


def save_tablebase(p: Puzzle, result: ExploreResult, path: Path) -> None:
    """Write ``result``'s tablebase to ``path`` (its folders made as needed); PuzzleError
    where it cannot be written."""
    from . import tablebase

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tablebase.save(path, p, p.state_index(), result.table, result.depth_counts)
    except OSError as exc:
        raise PuzzleError(f"cannot write the tablebase {str(path)!r}: {exc.strerror or exc}") from None
