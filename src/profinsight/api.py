"""The notebook facade: ``load``, ``load_parallel``, ``compare`` and ``ranks_report`` — every
function that takes a path and hands back profiles or a comparison of them.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from . import diagnostics as dg
from .discovery import Run, discover
from .errors import MixedRuns, NotAProfile, ProfileError
from .importers import RankSource
from .profile import Profile
from .store.cache import lookup as cache_hit
from .store.distributed import load_sources_dask
from .store.experiments import resolve_name
from .store.loader import LoadedRank, Progress, import_isolated, in_process, load_in_process, load_sources

if TYPE_CHECKING:  # the comparison code (and pandas) loads when a comparison is asked for
    from .comparison.core import Comparison
    from .comparison.ranks import RanksReport

PathLike = str | Path


TIERS = ("auto", "summary", "full")


def load(
    path: PathLike | Iterable[PathLike] | Run,
    *,
    prefer: str | None = None,
    progress: Progress | None = None,
    tier: str = "full",
) -> Profile:
    """Load one run: a rank folder, a run folder, a trace file, a list of paths that form one
    run (e.g. the rank files of one Kineto job), or a :class:`Run` from :func:`discover`.

    ``prefer`` ("db" | "text") chooses the export when a rank folder has both (default: DB,
    as the vendor's viewer does).  ``tier`` (see :func:`tiered`): ``"full"`` (default) imports
    every rank's traces; ``"summary"`` reads only each rank's own summaries (step trace,
    communication and matrix JSON, or a DB export's analysis.db; a Kineto job: a pre-pass over its
    traces) -- the cluster view in a fraction of the time, no kernels, operators or timeline;
    ``"auto"`` takes the summary tier where a multi-rank run has one.  Raises :class:`~profinsight.errors.MixedRuns` when the path holds several
    runs (the error lists them; pass one of ``discover(path)``).
    """
    if prefer not in (None, "db", "text"):
        raise ProfileError(f"prefer must be 'db', 'text' or None, not {prefer!r}")
    run = tiered(resolve_run(path, prefer=prefer), tier)
    ranks = load_sources(run.sources, progress=progress)
    return Profile(run, ranks, list(run.notes) + run_diagnostics(run, ranks))


def tiered(run: Run, tier: str) -> Run:
    """``run`` as the ``tier`` asks: ``"full"`` as it is; ``"summary"``: every rank read from its own
    summaries (``ASCEND_PROFILER_OUTPUT/step_trace_time.csv``, ``communication.json``,
    ``communication_matrix.json``, ``profiler_metadata.json``; a DB export's ``analysis.db``; for a
    Kineto job the pre-pass over each trace) -- a clear error where the run has none; ``"auto"``:
    the summary tier where the run has one (see :func:`summary_run`), else the run as it is.  A
    cluster summary (``cluster_analysis_output/``, ``cluster_analysis.db``) is the summary tier
    whatever is asked: it holds nothing else."""
    if tier not in TIERS:
        raise ProfileError(f"tier must be one of {', '.join(TIERS)}, not {tier!r}")
    if tier == "full" or tier_of(run) == "summary":
        return run
    summary = summary_run(run)
    if summary is not None:
        return summary
    if tier == "summary":
        raise ProfileError(
            f"{run.root}: the summary tier needs two or more torch_npu rank folders that each hold "
            "ASCEND_PROFILER_OUTPUT/step_trace_time.csv (or, DB export, analysis.db), or two or more Kineto "
            "traces; this run has neither",
            file=str(run.root),
            fix="load it with tier='full' (CLI: --tier full) to import the traces",
        )
    return run


def summary_run(run: Run) -> Run | None:
    """``run`` with every rank in the summary tier, or None where it has none: torch_npu rank
    folders that all hold their summaries (text or DB export), or a Kineto job of two or more
    ranks (the pre-pass over its traces: steps, device tasks, collectives)."""
    from dataclasses import replace

    from .importers.cluster import summary_sources, tier_note

    if run.format == "kineto" and len(run.sources) >= 2:  # no summaries: the pre-pass over the traces
        from .importers.kineto import _prepass

        return replace(
            run,
            sources=_prepass.sources(run.sources),
            notes=(*run.notes, _prepass.tier_note(run.root, len(run.sources))),
        )
    if run.format not in ("ascend_text", "ascend_db") or len(run.sources) < 2:
        return None
    sources = summary_sources(run.sources)
    if not sources:
        return None
    return replace(run, format="cluster", sources=sources, notes=(*run.notes, tier_note(run.root, sources)))


def rank_run(run: Run, rank: int, *, prefer: str | None = None) -> Run:
    """The full tier of one rank of ``run`` (a summary-tier run, or any multi-rank run): the run
    that its rank folder or file holds on its own, traces and all -- what opening that rank's
    timeline or a per-rank analysis needs."""
    for src in run.sources:
        if src.rank_hint == rank:
            opts = dict(src.options)
            if opts.get("tier") is None:
                return replace_sources(run, (src,))
            if run.format != "cluster":  # a pre-pass tier of the rank's own format: the same file in full
                full = tuple((k, v) for k, v in src.options if k != "tier")
                return replace_sources(run, (RankSource(src.format, src.path, src.files, src.rank_hint, full),))
            runs = discover(src.path, prefer=prefer)
            if len(runs) == 1:
                return runs[0]
            raise ProfileError(f"{src.path} does not hold one run for rank {rank}", file=str(src.path))
    raise ProfileError(f"rank {rank} is not a rank of {run.root}", fix=f"ranks: {run.ranks}")


def tier_of(run: Run) -> str:
    """``summary`` where ``run``'s ranks are read from their summaries or a pre-pass (a cluster
    summary, the summary tier of rank folders, the Kineto pre-pass), else ``full``."""
    if run.format == "cluster" or any(dict(s.options).get("tier") for s in run.sources):
        return "summary"
    return "full"


def replace_sources(run: Run, sources) -> Run:
    """``run`` holding ``sources`` only (one source: rooted at it)."""
    from dataclasses import replace

    return replace(run, sources=tuple(sources), root=Path(sources[0].path) if len(sources) == 1 else run.root)


def suspicious_ranks(profile: Profile) -> list[int]:
    """The ranks of ``profile`` in the order to look at them in full: the rank each parallel group
    waits for (by that wait), then the ranks ``slow_ranks`` names, then the rest by their distance
    from the median computing -- the order of the background full import."""
    order: list[int] = []

    def add(ranks):
        for r in ranks:
            r = int(r)
            if r not in order:
                order.append(r)

    try:
        g = profile.parallel_groups()
        if not g.empty:
            g = g[g["slow_rank"].notna()].sort_values("waited_for_us", ascending=False)
            add(g["slow_rank"])
        sr = profile.slow_ranks()
        if not sr.empty:
            add(sr.sort_values("deviation_us", ascending=False)["rank"])
        rs = profile.rank_summary()
        if not rs.empty:
            add(
                rs.assign(far=rs["computing_vs_median_us"].abs()).sort_values(["far", "rank"], ascending=[False, True])[
                    "rank"
                ]
            )
    except ProfileError:
        pass
    add(profile.ranks)
    return order


def import_full(
    profile: Profile,
    ranks: Iterable[int] | None = None,
    *,
    client=None,
    workers: int | None = None,
    progress: Progress | None = None,
    stop=None,
) -> list[int]:
    """Import ``ranks`` of ``profile`` in full (default: every rank, most suspicious first: see
    :func:`suspicious_ranks`) into the cache, one rank at a time, so that opening one of them later
    is a warm read -- the background import behind a summary-tier view.  By default one spawned
    process imports them one by one (the caller stays responsive; ``stop``, a ``threading.Event``,
    ends it between ranks); ``workers`` > 1 local processes or ``client`` (Dask) import them in
    parallel.  Returns the ranks now in the cache."""
    todo = list(ranks) if ranks is not None else suspicious_ranks(profile)
    runs = [rank_run(profile.run, r) for r in todo]
    sources = [s for run in runs for s in run.sources]
    if client is not None:
        load_sources_dask(sources, client, progress=progress)
    elif workers and workers > 1:
        load_sources(tuple(sources), progress=progress, workers=workers)
    else:
        import_isolated(sources, stop=stop, progress=progress)
    return [r for r, run in zip(todo, runs) if all(cache_hit(s) is not None for s in run.sources)]


def load_parallel(
    path,
    *,
    client=None,
    scheduler: str | None = None,
    prefer: str | None = None,
    workers: int | None = None,
    progress=None,
    tier: str = "full",
):
    """Load one run (see :func:`profinsight.load`) with its ranks imported in parallel: on the
    Dask ``client`` (or a client connected to ``scheduler``) when given, else in local
    processes (``workers`` of them; default: one per CPU).  The summary tier (``tier``) is read in
    this process whatever is given: a rank's summaries are a few KB, a task would cost more, and
    no Dask connection is made for it."""
    run = tiered(resolve_run(path, prefer=prefer), tier)
    own = None
    if client is None and scheduler and not in_process(run.sources):
        client = own = connect(scheduler)
    try:
        return load_each([run], client=client, workers=workers, progress=progress)[0]
    finally:
        if own is not None:
            own.close()


def connect(scheduler: str, timeout: float | None = None):
    """A Dask client of the scheduler at ``scheduler`` (``tcp://host:8786``), or a clear error:
    ``distributed`` not installed, the scheduler unreachable (after ``timeout`` seconds; default
    ``PROFINSIGHT_DASK_TIMEOUT`` or 10), or a scheduler with no worker."""
    import os

    try:
        from distributed import Client
    except ImportError:
        raise ProfileError(
            "loading on a Dask scheduler needs the distributed package, which is not installed",
            fix="pip install 'profinsight[dask]', or leave out --scheduler / scheduler= to load in local processes",
        ) from None
    timeout = float(timeout or os.environ.get("PROFINSIGHT_DASK_TIMEOUT") or 10)
    try:
        client = Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ProfileError(
            f"could not reach the Dask scheduler at {scheduler} within {timeout:g} s "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'})",
            fix="start it (dask scheduler, then dask worker ADDRESS on each machine) and check the address "
            "and port, or leave out --scheduler to load in local processes",
        ) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ProfileError(
            f"the Dask scheduler at {scheduler} has no worker (none joined within {timeout:g} s: {type(exc).__name__})",
            fix="start workers with: dask worker " + scheduler,
        ) from None
    return client


def resolve_run(path, *, prefer: str | None = None) -> Run:
    """The single run that ``path`` names (see :func:`load`)."""
    if isinstance(path, Run):
        return path
    if isinstance(path, (str, Path)):
        # a registered experiment's name; a real path wins
        runs = discover(resolve_name(path) or path, prefer=prefer)
    else:
        paths = list(path)
        if not paths:
            raise NotAProfile("no path given", fix="pass a profile folder or trace file")
        runs = [r for p in paths for r in discover(p, prefer=prefer)]
        if len(runs) > 1:
            runs = [_merge(runs)]
    if len(runs) == 1:
        return runs[0]
    listing = "\n".join(f"  - {r.label}" for r in runs)
    raise MixedRuns(
        f"{path} holds {len(runs)} runs; load one of them:\n{listing}",
        runs,
        file=str(path),
        fix="pass one run's folder, or in Python: profinsight.load(profinsight.discover(path)[i])",
    )


def _merge(runs: list[Run]) -> Run:
    fmts = {r.format for r in runs}
    sources = [s for r in runs for s in r.sources]
    ranks = [s.rank_hint for s in sources]
    if len(fmts) > 1 or None in ranks or len(set(ranks)) != len(ranks):
        listing = "\n".join(f"  - {r.label}" for r in runs)
        raise MixedRuns(
            f"these paths do not form one run (formats or ranks clash):\n{listing}",
            runs,
            fix="give the rank files of one job, each with a distinct rank",
        )
    common = Path(*_common_parts([s.path for s in sources]))
    return Run(
        runs[0].format,
        common,
        tuple(sorted(sources, key=lambda s: s.rank_hint)),
        tuple(n for r in runs for n in r.notes),
        runs[0].level,
    )


def _common_parts(paths):
    parts = [p.parts for p in paths]
    out = []
    for items in zip(*parts):
        if len(set(items)) != 1:
            break
        out.append(items[0])
    return out or ["/"]


def _run_info_rows(ranks: list[LoadedRank]) -> list[list[dict]]:
    """Each rank's ``run_info`` rows; the ranks of one run entry (the summary tier) from one read of
    its whole table (1,024 slices turned into rows one by one cost seconds)."""
    whole: dict[int, list[dict]] = {}
    out = []
    for r in ranks:
        if r.shared is None:
            out.append(r.read("run_info").to_pylist())
            continue
        if id(r.shared) not in whole:
            whole[id(r.shared)] = r.shared.read("run_info").to_pylist()
        at = r.shared.offsets("run_info")
        out.append(whole[id(r.shared)][at[r.position] : at[r.position + 1]])
    return out


def run_diagnostics(run: Run, ranks: list[LoadedRank]) -> list[dg.Diagnostic]:
    """Checks across ranks: duplicate or missing rank ids, versions that differ, ranks missing
    from the job."""
    out = []
    ids = Counter(r.rank for r in ranks)
    dup = sorted(k for k, v in ids.items() if v > 1)
    if dup:
        out.append(
            dg.error(
                "duplicate-rank",
                f"rank id(s) {dup} appear more than once in {run.root}",
                file=run.root,
                fix="load each collection separately (profinsight.discover lists them)",
            )
        )
    if len(ranks) > 1 and any(r.source.rank_hint is None for r in ranks):
        out.append(
            dg.warning(
                "missing-rank-id",
                "some ranks record no rank id; they were numbered 0",
                file=run.root,
                fix="collect with torch.distributed initialised so each rank writes its id",
            )
        )
    versions, worlds, infos = {}, set(), {}
    for r, info in zip(ranks, _run_info_rows(ranks)):
        for row in info:
            infos[r.rank] = row
            try:
                versions[r.rank] = json.loads(row.get("versions") or "{}")
            except ValueError:
                versions[r.rank] = {}
            if row.get("world_size"):
                worlds.add(int(row["world_size"]))
    distinct = {json.dumps(v, sort_keys=True) for v in versions.values() if v}
    if len(distinct) > 1:
        detail = "; ".join(f"rank {k}: {v}" for k, v in sorted(versions.items()))
        out.append(
            dg.warning(
                "versions-differ",
                f"software versions differ across ranks: {detail}",
                file=run.root,
                fix="install the same CANN / torch_npu / torch on every node",
            )
        )
    if len(worlds) == 1:
        world = worlds.pop()
        if world > len(ranks):
            out.append(
                dg.info(
                    "partial-ranks",
                    f"{len(ranks)} of {world} ranks of the job were loaded",
                    file=run.root,
                    fix="load the folder that holds every rank's profile to compare ranks",
                )
            )
    return out + _one_job(run, infos) + _capture_checks(run, ranks, infos)


#: ranks of one job collect at the same time; more apart than this, they are different collections
ONE_JOB_MAX_APART_S = 60.0


def _one_job(run: Run, infos: dict) -> list[dg.Diagnostic]:
    """Ranks loaded as one run that cannot be one job: collections that do not overlap in time
    (more than a minute apart), different world sizes, different device models.  Without this a
    run of two unrelated traces passed as sound and every cross-rank figure compared them."""
    if len(infos) < 2:
        return []
    reasons = []
    spans = {
        r: (int(i["collect_start_ns"]), int(i.get("collect_end_ns") or i["collect_start_ns"]))
        for r, i in infos.items()
        if i.get("collect_start_ns") is not None
    }
    if len(spans) > 1:
        first_end = min(spans.items(), key=lambda kv: kv[1][1])
        last_start = max(spans.items(), key=lambda kv: kv[1][0])
        apart_s = (last_start[1][0] - first_end[1][1]) / 1e9
        if apart_s > ONE_JOB_MAX_APART_S:
            reasons.append(
                f"rank {last_start[0]} was collected {_duration(apart_s)} after rank {first_end[0]} had finished"
            )
    for key, what in (("world_size", "world sizes"), ("device_name", "devices")):
        seen = {r: i.get(key) for r, i in infos.items() if i.get(key) not in (None, "")}
        if len(set(map(str, seen.values()))) > 1:
            reasons.append(f"{what} differ: " + ", ".join(f"rank {r} {v}" for r, v in sorted(seen.items())))
    if not reasons:
        return []
    return [
        dg.warning(
            "different-jobs",
            "these ranks do not look like one job: " + "; ".join(reasons),
            file=run.root,
            fix="load the rank files of one job together; to set two jobs side by side: profinsight compare A B",
        )
    ]


def _duration(s: float) -> str:
    if s >= 86400:
        return f"{s / 86400:,.1f} days"
    if s >= 3600:
        return f"{s / 3600:,.1f} hours"
    return f"{s / 60:,.1f} minutes"


def _capture_checks(run: Run, ranks: list[LoadedRank], infos: dict) -> list[dg.Diagnostic]:
    """A capture larger than needed, versions outside the tested range (importers/checks.py)."""
    from .importers.checks import run_checks

    steps = set()
    for r in ranks:
        if r.row_count("steps"):
            steps.update(r.read("steps").column("step").to_pylist())
    tasks = sum(r.row_count("device_tasks") for r in ranks)
    return run_checks(infos, len(steps), tasks, run.root)


def ranks_report(
    profile,
    threshold: float = 3.0,
    min_share: float = 0.02,
    *,
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    prefer: str | None = None,
    lang: str | None = None,
    tier: str = "auto",
) -> RanksReport:
    """The ranks report of a loaded profile, or of a path: loaded in the ``tier`` asked for
    (default ``"auto"``: from every rank's own summaries where a multi-rank run has them, no trace
    parsed; ``"full"``: every rank's traces, in parallel -- local processes (``workers``) or a Dask
    cluster (``client=`` / ``scheduler=``) -- through :func:`load_parallel`; ``"summary"``: the
    summaries or a clear error).  ``report.profile`` says which tier each figure came from
    (``step_breakdown().source``; the run's ``summary-tier`` diagnostic)."""
    from .comparison.ranks import RanksReport

    if not isinstance(profile, Profile):
        profile = load_parallel(profile, client=client, scheduler=scheduler, workers=workers, prefer=prefer, tier=tier)
    return RanksReport(profile, threshold, min_share, lang=lang)


def compare(
    base,
    *others,
    names=None,
    prefer=None,
    mode: str = "device",
    aliases=None,
    phases=("forward",),
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    lang: str | None = None,
) -> Comparison:
    """Compare a baseline run with one or more changed runs (a series: base -> opt1 -> opt2).

    Each argument is a path, a :class:`~profinsight.discover.Run` or a loaded
    :class:`~profinsight.profile.Profile`.  ``names`` labels the runs (default: folder names).

    ``mode="device"`` (default) compares device kernels and the step (a :class:`Comparison`);
    ``mode="framework"`` aligns two runs whose kernels differ (a GPU run and an NPU run) at the
    framework-op level (a :class:`~profinsight.comparison.framework.FrameworkComparison`;
    ``aliases`` extends the op-name mapping, ``phases`` selects forward / backward / optimizer /
    communication ops).  Paths load with their ranks in parallel: local processes
    (``workers``), or a Dask cluster (``client=`` or ``scheduler="tcp://host:8786"``) — the same
    function (:func:`load_parallel`) either way.  ``lang`` (en / zh) chooses the words of the
    verdicts (default from the locale).
    """
    items = [base, *others]
    if len(items) < 2:
        raise ProfileError("compare needs at least two runs", fix="compare(base, changed, ...)")
    if mode not in ("device", "framework"):
        raise ValueError("mode must be 'device' or 'framework'")
    names = None if names is None else list(names)
    if names is not None and len(names) != len(items):
        raise ProfileError(f"{len(names)} names for {len(items)} runs")
    own = None
    if client is None and scheduler:
        client = own = connect(scheduler)
    try:
        profiles = load_each(items, prefer=prefer, client=client, workers=workers)
    finally:
        if own is not None:
            own.close()
    # the comparison's code (0.5 s with pandas) only now: a worker that imports a run starts
    # that much sooner (this process's own import loads pandas anyway)
    from .comparison.core import Comparison, default_name, unique_names

    if names is None:
        names = [default_name(p, x, i) for i, (p, x) in enumerate(zip(profiles, items))]
    names = unique_names([str(n) for n in names])
    if mode == "framework":
        from .comparison.framework import FrameworkComparison

        return FrameworkComparison(profiles, names, aliases=aliases, phases=phases)
    return Comparison(profiles, names, lang=lang)


def load_each(
    items, *, prefer: str | None = None, client=None, workers: int | None = None, progress=None
) -> list[Profile]:
    """One profile per item of ``items`` (a path, a list of paths that form one run, a :class:`Run`;
    a loaded :class:`Profile` stays as it is), the ranks of all of them imported side by side in
    one call: local processes (``workers``; by default one per rank to import where there is
    enough to import, see :func:`~profinsight.store.loader.load_sources`) or the Dask ``client``.
    Every path is resolved before anything is imported, so a wrong path fails at once.  A rank
    named by two items is imported once.  Each profile is what :func:`load` gives for its item."""
    if prefer not in (None, "db", "text"):
        raise ProfileError(f"prefer must be 'db', 'text' or None, not {prefer!r}")
    runs = [None if isinstance(x, Profile) else resolve_run(x, prefer=prefer) for x in items]
    todo: dict[RankSource, int] = {}
    for run in runs:
        if run is not None and not in_process(run.sources):
            for src in run.sources:
                todo.setdefault(src, len(todo))
    sources = tuple(todo)
    if client is not None and sources:
        ranks = load_sources_dask(sources, client, progress=progress)
    else:
        ranks = load_sources(sources, progress=progress, workers=workers or None)
    out, given = [], set()
    for x, run in zip(items, runs):
        if run is None:
            out.append(x)
            continue
        if in_process(run.sources):
            mine = load_in_process(run.sources, progress)
        else:
            mine = [_own(ranks[todo[src]], src in given) for src in run.sources]
            given.update(run.sources)
        out.append(Profile(run, mine, list(run.notes) + run_diagnostics(run, mine)))
    return out


def _own(rank: LoadedRank, shared: bool) -> LoadedRank:
    """``rank`` itself, or (a rank that an earlier profile holds too) a loaded rank of its own."""
    return dataclasses.replace(rank, diagnostics=list(rank.diagnostics)) if shared else rank
