"""``sqlanon generate``: frequency set -> candidates -> KRIMP code table -> generated rows -> scores
-> release (Parquet/CSV, a new table, or in place) recorded in the release registry.

Nothing is written before the generated table and its scores are final; the generated rows are
held in a temp table of the engine while they are scored, then written by the shared release
writer (one transaction for table targets, write-beside-and-rename for files).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.generation import itemsets as its
from sqlanon.generation.generator import GeneratorModel, generate
from sqlanon.generation.krimp import CodeTable, krimp, standard_size
from sqlanon.generation.scores import compare_tables
from sqlanon.progress import Reporter, RichReporter, as_reporter
from sqlanon.search import limits as lim
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import col, table_ref
from sqlanon.release import write as release
from sqlanon.risk.measure import measure_table


def generated_arrow(enc: its.Encoded, rows: np.ndarray) -> pa.Table:
    """Generated item ids -> the original values (as text), one column per source column, taken
    from the labels by Arrow (no Python object per generated value)."""
    import pyarrow.compute as pc

    labels = pa.array([None if v is None else str(v) for v in enc.item_labels], pa.string())
    return pa.table({name: pc.take(labels, pa.array(rows[:, j])) for j, name in enumerate(enc.columns)})


def release_query(table: str, columns: list[str], types: dict[str, str]) -> exp.Select:
    """``SELECT CAST(col AS <source type>) AS col, ... FROM generated`` (values were read as text)."""
    outs = []
    for c in columns:
        t = types.get(c, "VARCHAR")
        e: exp.Expr = col(c)
        if t.upper() != "VARCHAR":
            e = exp.Cast(this=e, to=exp.DataType.build(t, dialect="duckdb"))
        outs.append(exp.alias_(e, c, quoted=True))
    return exp.select(*outs).from_(table_ref(table))


def write_release(engine, query: exp.Select, target, source: Source, entry: dict, registry_path: str | None = None) -> dict:
    """Write through the shared release writer (``sqlanon.release.write``)."""
    if target is None or target.kind == "none":
        return {"output": None, "release_id": None}
    entry = dict(entry)
    entry.setdefault("input_hash", release.input_hash(engine, source))
    entry["target"] = target.describe()
    return release.write_query(engine, query, target, source, entry, registry_path=registry_path)


PROGRESS_EVERY = 5.0  # seconds between progress messages when not on a terminal
#: the share of ``--time-limit`` mining and KRIMP may take; the generation has the rest (it is
#: linear in the rows and fast: a code table cut short still gets its rows generated)
CODE_TABLE_SHARE = 0.7


class _Throttle:
    """Progress of a long loop: the bar (on a terminal) at every call, a message at most every
    ``PROGRESS_EVERY`` seconds otherwise."""

    def __init__(self, rep: Reporter, handle) -> None:
        self.rep, self.handle, self.every = rep, handle, PROGRESS_EVERY
        self.bar = isinstance(rep, RichReporter)
        self.last = time.perf_counter()

    def __call__(self, done: int, total: int, note: str, message: str) -> None:
        self.handle.update(done, total, note)
        if not self.bar and time.perf_counter() - self.last >= self.every:
            self.last = time.perf_counter()
            self.rep.message(message)


def build_code_table(engine, enc: its.Encoded, min_sup: int, candidates: str, rep: Reporter, time_limit: float | None = None,
                     deadline: float | None = None) -> tuple[CodeTable, int, dict]:
    """Mine the candidates and run KRIMP, with progress; ``time_limit`` (seconds from now) or
    ``deadline`` (a :func:`sqlanon.search.limits.now` reading) bounds both and, when it strikes,
    the code table built so far is returned (``info["stopped_by"]``)."""
    if deadline is None and time_limit is not None:
        deadline = lim.now() + float(time_limit)
    info: dict = {"stopped_by": None}
    t = time.perf_counter()
    with rep.phase("mining", engine=None) as handle:
        tick = _Throttle(rep, handle)
        cands = its.mine(engine, enc, min_sup, candidates, deadline=deadline,
                         progress=lambda d, n, k: tick(d, n, f"{k:,} itemsets", f"mining: {d} of {n} branches, {k:,} {candidates} itemsets so far"))
    n_cands = len(cands)
    info["mine_seconds"] = time.perf_counter() - t
    t = time.perf_counter()
    if cands.time_limited:  # no code table from a part of the candidates: the standard one
        info["stopped_by"] = "time_limit"
        rep.message(f"time limit reached while mining ({n_cands:,} itemsets found): the standard code table is returned")
        cands = its.Itemsets(cands.candidates.select(np.zeros(0, dtype=np.int64)))
    rep.message(f"{enc.n_rows} rows, {len(enc.db.weights)} distinct, {enc.db.n_items} items, {n_cands:,} {candidates} candidates at min_sup {min_sup}")
    st_bits = sum(its_standard_size(enc))
    with rep.phase("krimp", total=max(len(cands), 1)) as handle:
        tick = _Throttle(rep, handle)

        def krimp_progress(done: int, total: int, size: int, bits: float) -> None:
            pct = 100.0 * bits / st_bits if st_bits else 100.0
            tick(done, total, f"{size} elements, L% {pct:.2f}", f"krimp: {done:,} of {total:,} candidates, {size} elements, {bits:,.0f} bits (L% {pct:.2f})")

        ct = krimp(enc.db, cands, progress=krimp_progress, deadline=deadline)
    del cands
    info["krimp_seconds"] = time.perf_counter() - t
    if ct.time_limited:
        info["stopped_by"] = "time_limit"
        rep.message(f"time limit reached: best code table so far, after {ct.candidates_tried:,} of {ct.candidates_total:,} candidates")
    return ct, n_cands, info


def its_standard_size(enc: its.Encoded) -> tuple[float, float]:
    return standard_size(enc.db)


def check_options(min_sup: int = 1, laplace: float = 0.001, rows: int | None = None, candidates: str = "all", time_limit: float | None = None) -> None:
    """Refuse a bad option of :func:`run` with one line naming its flag, before anything is read."""
    if candidates not in ("all", "closed"):
        raise ConfigError(f"--candidates must be all or closed, got {candidates!r}")
    if not (laplace > 0):
        raise ConfigError(f"--laplace must be > 0, got {laplace}")
    if min_sup < 1:
        raise ConfigError(f"--min-sup must be at least 1, got {min_sup}")
    if rows is not None and int(rows) < 1:
        raise ConfigError(f"--rows must be at least 1, got {rows}")
    if time_limit is not None and not (float(time_limit) > 0):
        raise ConfigError(f"--time-limit must be > 0 seconds, got {time_limit}")


def run(
    engine,
    source: Source,
    columns: list[str] | None = None,
    min_sup: int = 1,
    laplace: float = 0.001,
    rows: int | None = None,
    seed: int | None = None,
    candidates: str = "all",
    target=None,
    scores: bool = True,
    dissimilarity: bool = True,
    registry_path: str | None = None,
    progress: Callable[[str], None] | Reporter | None = None,
    risk: bool = True,
    population_fraction: float | None = None,
    time_limit: float | None = None,
) -> dict:
    """Build the code table, generate ``rows`` rows (default: as many as the source), score, write.

    ``time_limit`` (seconds, counted from the start of the run) bounds mining, KRIMP and the
    generation: mining and KRIMP stop at :data:`CODE_TABLE_SHARE` of it, and the rows are then
    generated from the best code table so far (``code_table_complete: false``); when it strikes
    during the generation, the rows generated so far
    are released (``rows`` fewer than ``rows_asked``; the first block of
    :data:`~sqlanon.generation.generator.GENERATE_BLOCK` rows is always generated). Either way
    ``stopped_by: "time_limit"``. The scores get what is left (their dissimilarity's KRIMP run is
    cut short, ``dissimilarity_time_limited``); the risk figures and the write are not cut short.
    """
    rep = as_reporter(progress)
    say = rep.message
    t_start = time.perf_counter()
    started = lim.now()
    deadline = None if time_limit is None else started + float(time_limit)
    phases: dict[str, float] = {}
    if columns is None:
        columns = source.column_names(engine)
    check_options(min_sup, laplace, rows, candidates, time_limit)

    t = time.perf_counter()
    with rep.phase("frequency set", engine=engine):
        enc = its.encode(engine, source, list(columns))
    phases["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    ct, n_cands, info = build_code_table(engine, enc, min_sup, candidates, rep, deadline=None if time_limit is None else started + CODE_TABLE_SHARE * float(time_limit))
    phases["mine"], phases["krimp"] = info.pop("mine_seconds"), info.pop("krimp_seconds")
    say(f"code table: {ct.non_singletons} non-singleton elements, L% {ct.compression_ratio:.2f}" + ("" if not ct.time_limited and info["stopped_by"] is None else " (best so far: time limit)"))

    complete = info["stopped_by"] is None  # the code table (mining and KRIMP ran to the end)
    t = time.perf_counter()
    model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(columns), laplace)
    n = enc.n_rows if rows is None else int(rows)
    with rep.phase("generate", total=n) as handle:
        tick = _Throttle(rep, handle)
        gen = generate(model, n, seed, progress=lambda done, total: tick(done, total, f"{done:,} rows", f"generate: {done:,} of {total:,} rows"), deadline=deadline)
    if len(gen) < n:
        info["stopped_by"] = "time_limit"
        say(f"time limit reached while generating: {len(gen):,} of {n:,} rows generated, released as they are")
    n_asked, n = n, len(gen)
    name = engine.temp_name("generated")
    engine.register_arrow(name, generated_arrow(enc, gen))
    phases["generate"] = time.perf_counter() - t

    result: dict = {
        "rows": n,
        "rows_asked": n_asked,
        "columns": list(columns),
        "candidates": candidates,
        "candidate_count": n_cands,
        "min_sup": min_sup,
        "laplace": laplace,
        "seed": seed,
        "code_table_size": ct.non_singletons,
        "compression_ratio": ct.compression_ratio,
        "total_bits": ct.total_bits,
        "standard_bits": ct.standard_bits,
        "candidates_considered": ct.candidates_tried,
        "code_table_complete": complete,
        "stopped_by": info["stopped_by"],
        "time_limit": time_limit,
    }
    if scores:
        t = time.perf_counter()
        gen_source = Source(kind="table", table=name)
        with rep.phase("scores"):
            left = None if deadline is None else max(deadline - lim.now(), 0.001)
            sc = compare_tables(engine, gen_source, source, list(columns), min_sup, candidates, dissimilarity_measure=dissimilarity, original=(enc, ct), say=say, time_limit=left)
        phases["scores"] = time.perf_counter() - t
        result.update(sc)
        eq = "n/a" if sc["pct_equal_itemsets"] is None else f"{sc['pct_equal_itemsets']:.1f}%"
        say(f"NAS {sc['nas']:.3f}, {eq} equal itemsets" + (f", dissimilarity {sc['dissimilarity']:.3f}" if "dissimilarity" in sc else ""))

    if risk:  # re-identification risk of the input and of the generated table, every column a QI

        t = time.perf_counter()
        result["risk"] = {
            "before": measure_table(engine, source, list(columns), population_fraction=population_fraction),
            "after": measure_table(engine, Source(kind="table", table=name), list(columns), population_fraction=population_fraction),
        }
        phases["risk"] = time.perf_counter() - t

    t = time.perf_counter()
    types = dict(source.columns(engine))
    entry = {
        "source": source.describe(),
        "search": "generate",
        "policy": {"min_sup": min_sup, "laplace": laplace, "rows": n, "seed": seed, "candidates": candidates, "columns": list(columns)},
        "transformation": {"method": "krimp-generator", "code_table_size": ct.non_singletons, "compression_ratio": ct.compression_ratio},
        "privacy": {k: result[k] for k in ("nas", "as") if k in result},
        "metrics": {k: result[k] for k in ("pct_equal_itemsets", "avg_support_diff_pct", "avg_support_new_pct", "dissimilarity") if k in result},
        "rows": n,
        "suppressed_rows": 0,
        "report": {**result, "search": "generate", "input": source.describe()} if risk else None,
    }
    written = write_release(engine, release_query(name, list(columns), types), target, source, entry, registry_path)
    phases["write"] = time.perf_counter() - t
    engine.execute(its.drop_table(name, engine.dialect))
    its.drop(engine, enc)
    result.update({"output": written.get("output"), "release_id": written.get("release_id")})
    result["phases"] = phases
    result["seconds"] = time.perf_counter() - t_start
    return result
