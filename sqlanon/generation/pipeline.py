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
from sqlanon.generation.generator import GeneratorModel, generate_blocks
from sqlanon.generation.krimp import CodeTable, krimp, standard_size
from sqlanon.generation.scores import compare_tables
from sqlanon.progress import Reporter, RichReporter, as_reporter
from sqlanon.search import limits as lim
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import col, table_ref
from sqlanon.release import write as release
from sqlanon.risk.measure import measure_counts


def item_labels(enc: its.Encoded) -> pa.Array:
    """Every item's value as text (None stays NULL), indexed by item id."""
    return pa.array([None if v is None else str(v) for v in enc.item_labels], pa.string())


def generated_arrow(enc: its.Encoded, rows: np.ndarray, dictionary: bool = False, labels: pa.Array | None = None) -> pa.Table:
    """Generated item ids -> the original values (as text), one column per source column, taken
    from the labels by Arrow (no Python object per generated value). ``dictionary``: each column
    a dictionary array (the item ids as indices into the labels, no string per value), which
    DuckDB reads as VARCHAR."""
    import pyarrow.compute as pc

    if labels is None:
        labels = item_labels(enc)
    if dictionary:
        return pa.table({name: pa.DictionaryArray.from_arrays(pa.array(rows[:, j].astype(np.int32)), labels) for j, name in enumerate(enc.columns)})
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
#: the share of ``--time-limit`` mining and KRIMP may take; the generation, the scores, the risk
#: figures and the write have the rest (each linear in the rows: a code table cut short still
#: gets its rows generated and scored)
CODE_TABLE_SHARE = 0.5


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
        info["stopped_by"], info["stopped_in"] = "time_limit", "mining"
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
        info["stopped_by"], info["stopped_in"] = "time_limit", "krimp"
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


#: the share of ``--time-limit`` the scores' optional parts (frequent patterns, the released
#: table's KRIMP run and dissimilarity) may end by; the risk figures and the write have the rest
SCORES_SHARE = 0.9
#: ... and at least this many times the frequency-set scan's seconds before the limit (the write,
#: one pass over the rows; the risk figures come from the frequency sets, in milliseconds)
RESERVE_SCANS = 5.0


#: the generation, the generated table's frequency set and the write take about this many times
#: the input's frequency-set scan, per row generated for each row of the input (the figures:
#: docs/measurements.md): the code table ends early enough to leave them that
ROWS_SCANS = 8.0


def code_table_deadline(started: float, time_limit: float | None, encode_seconds: float, rows: int, source_rows: int) -> float | None:
    """When mining and KRIMP stop: at :data:`CODE_TABLE_SHARE` of ``time_limit``, or earlier so
    that :data:`ROWS_SCANS` times the input's scan (``encode_seconds``, scaled by the rows asked
    against the input's) is left for the rows themselves."""
    if time_limit is None:
        return None
    reserve = ROWS_SCANS * float(encode_seconds) * max(int(rows), 1) / max(int(source_rows), 1)
    return started + max(0.0, min(CODE_TABLE_SHARE * float(time_limit), float(time_limit) - reserve))


class TimeLimitStop(Exception):
    """The run's ``--time-limit`` passed in ``phase``: nothing is written (see :func:`run`)."""

    def __init__(self, phase: str, result: dict) -> None:
        super().__init__(phase)
        self.phase, self.result = phase, result


def _past(deadline: float | None) -> bool:
    return deadline is not None and lim.now() >= deadline


def _stopped(result: dict, phase: str, say) -> dict:
    """The result of a run the time limit stopped in ``phase``: what was kept, nothing written."""
    result.update({"stopped_by": "time_limit", "stopped_in": phase, "output": None, "release_id": None, "written": False})
    result["kept"] = f"nothing written: the time limit passed in the {phase} phase; {result['rows']:,} of {result['rows_asked']:,} rows generated, discarded"
    say(f"time limit reached in the {phase} phase: {result['kept']}")
    return result


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

    ``time_limit`` (seconds, counted from the start of the run) covers every phase. Mining and
    KRIMP stop at :data:`CODE_TABLE_SHARE` of it, or earlier to leave the rows their time
    (:func:`code_table_deadline`), and the rows are then generated from the best
    code table so far (``code_table_complete: false``, ``stopped_in: "krimp"`` or ``"mining"``;
    the run goes on: that code table is a finished plan). The scores' optional parts (frequent
    patterns, the released table's KRIMP run and the dissimilarity) end by :data:`SCORES_SHARE`
    of it, earlier if the frequency-set scan says the risk figures and the write need more
    (:data:`RESERVE_SCANS`; ``scores_time_limited``: what was not computed is None). If the limit itself passes during the generation, the scores or
    the risk figures, the run stops there and **nothing is written**: ``stopped_by:
    "time_limit"``, ``stopped_in`` the phase, ``written: false``, ``kept`` says what was done.
    The write itself is never cut short (outputs are written whole or not at all).
    """
    rep = as_reporter(progress)
    t_start = time.perf_counter()
    started = lim.now()
    deadline = None if time_limit is None else started + float(time_limit)
    if columns is None:
        columns = source.column_names(engine)
    check_options(min_sup, laplace, rows, candidates, time_limit)
    phases: dict[str, float] = {}
    t = time.perf_counter()
    with rep.phase("frequency set", engine=engine):
        enc = its.encode(engine, source, list(columns))
    phases["encode"] = time.perf_counter() - t
    name = None
    try:
        result, name, ct, codes = _model_and_rows(engine, enc, list(columns), min_sup, laplace, rows, seed, candidates, rep, started, time_limit, phases)
        result["time_limit"] = time_limit
        # the generated table's frequency set from its item ids (one sort, no scan of its text):
        # the scores and the risk figures are computed on it and on the input's
        t = time.perf_counter()
        with rep.phase("generated frequency set"):
            released = its.encode_codes(engine, enc, codes) if (scores or risk) else None
        del codes
        phases["encode_generated"] = time.perf_counter() - t
        _report_and_write(engine, source, enc, ct, name, released, result, phases, rep, deadline, started, time_limit,
                          target=target, scores=scores, dissimilarity=dissimilarity, registry_path=registry_path, risk=risk,
                          population_fraction=population_fraction, min_sup=min_sup, candidates=candidates)
    except TimeLimitStop as stop:
        result = _stopped(stop.result, stop.phase, rep.message)
    finally:
        if name is not None:
            engine.execute(its.drop_table(name, engine.dialect))
        its.drop(engine, enc)
    result["phases"] = phases
    result["seconds"] = time.perf_counter() - t_start
    return result


def _model_and_rows(engine, enc: its.Encoded, columns: list[str], min_sup: int, laplace: float, rows: int | None, seed: int | None,
                    candidates: str, rep: Reporter, started: float, time_limit: float | None, phases: dict) -> tuple[dict, str, CodeTable, np.ndarray]:
    """Mining, KRIMP and the generation; the generated rows registered as a temp table, and
    returned as item ids (``int32``, for the scores)."""
    say = rep.message
    deadline = None if time_limit is None else started + float(time_limit)
    t = time.perf_counter()
    n = enc.n_rows if rows is None else int(rows)
    ct, n_cands, info = build_code_table(engine, enc, min_sup, candidates, rep, deadline=code_table_deadline(started, time_limit, lim.now() - started, n, enc.n_rows))  # the scan, on the limit's clock
    phases["mine"], phases["krimp"] = info.pop("mine_seconds"), info.pop("krimp_seconds")
    say(f"code table: {ct.non_singletons} non-singleton elements, L% {ct.compression_ratio:.2f}" + ("" if not ct.time_limited and info["stopped_by"] is None else " (best so far: time limit)"))
    complete = info["stopped_by"] is None  # the code table (mining and KRIMP ran to the end)
    t = time.perf_counter()
    model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(columns), laplace)
    labels, dictionary = item_labels(enc), engine.dialect == "duckdb"
    arrows: list[pa.Table] = []  # each block as Arrow as soon as it is drawn (no string per value on DuckDB)
    codes: list[np.ndarray] = []  # and its item ids (int32), which the scores encode without a scan
    with rep.phase("generate", total=n) as handle:
        tick = _Throttle(rep, handle)
        for _, block in generate_blocks(model, n, seed, progress=lambda done, total: tick(done, total, f"{done:,} rows", f"generate: {done:,} of {total:,} rows"), deadline=deadline):
            arrows.append(generated_arrow(enc, block, dictionary, labels))
            codes.append(block)
    n_done = sum(len(b) for b in codes)
    result: dict = {
        "rows": n_done,
        "rows_asked": n,
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
        "stopped_in": info.get("stopped_in"),
    }
    if n_done < n:
        del arrows, codes
        phases["generate"] = time.perf_counter() - t
        raise TimeLimitStop("generate", result)
    name = engine.temp_name("generated")
    table = pa.concat_tables(arrows) if arrows else generated_arrow(enc, np.zeros((0, len(columns)), dtype=np.int32), dictionary, labels)
    del arrows
    engine.register_arrow(name, table)
    del table
    rows_codes = np.concatenate(codes) if codes else np.zeros((0, len(columns)), dtype=np.int32)
    phases["generate"] = time.perf_counter() - t
    return result, name, ct, rows_codes


def _report_and_write(engine, source: Source, enc: its.Encoded, ct: CodeTable, name: str, released: its.Encoded | None, result: dict, phases: dict, rep: Reporter,
                      deadline: float | None, started: float, time_limit: float | None, *, target, scores: bool, dissimilarity: bool,
                      registry_path: str | None, risk: bool, population_fraction: float | None, min_sup: int, candidates: str) -> None:
    """Scores, risk figures and the write, each under the run's deadline (:class:`TimeLimitStop`)."""
    say = rep.message
    columns = list(result["columns"])
    if scores:
        if _past(deadline):
            raise TimeLimitStop("scores", result)
        t = time.perf_counter()
        gen_source = Source(kind="table", table=name)
        with rep.phase("scores", total=3) as handle:
            tick = _Throttle(rep, handle)
            soft = None if time_limit is None else started + min(SCORES_SHARE * float(time_limit), float(time_limit) - RESERVE_SCANS * phases["encode"])
            sc = compare_tables(engine, gen_source, source, columns, min_sup, candidates, dissimilarity_measure=dissimilarity, original=(enc, ct), say=say, deadline=soft,
                                released=released, krimp_seconds=phases["mine"] + phases["krimp"],
                                progress=lambda d, k, note: tick(d, k, note, f"scores: {note} done ({d} of {k})"))
        phases["scores"] = time.perf_counter() - t
        result.update(sc)
        if _past(deadline):
            raise TimeLimitStop("scores", result)
        eq = "n/a" if sc["pct_equal_itemsets"] is None else f"{sc['pct_equal_itemsets']:.1f}%"
        say(f"NAS {sc['nas']:.3f}, {eq} equal itemsets" + (f", dissimilarity {sc['dissimilarity']:.3f}" if sc.get("dissimilarity") is not None else ""))
    if risk and released is not None:  # re-identification risk of the input and of the generated table, every column a QI
        t = time.perf_counter()
        with rep.phase("risk"):  # each distinct row a class: the two frequency sets' counts
            before = measure_counts(enc.db.weights, population_fraction=population_fraction)
            after = measure_counts(released.db.weights, population_fraction=population_fraction)
        phases["risk"] = time.perf_counter() - t
        if _past(deadline):
            raise TimeLimitStop("risk", result)
        result["risk"] = {"before": before, "after": after}
    if released is not None and not scores:
        its.drop(engine, released)
    t = time.perf_counter()
    n = result["rows"]
    entry = {
        "source": source.describe(),
        "search": "generate",
        "policy": {"min_sup": min_sup, "laplace": result["laplace"], "rows": n, "seed": result["seed"], "candidates": candidates, "columns": columns},
        "transformation": {"method": "krimp-generator", "code_table_size": ct.non_singletons, "compression_ratio": ct.compression_ratio},
        "privacy": {k: result[k] for k in ("nas", "as") if k in result},
        "metrics": {k: result[k] for k in ("pct_equal_itemsets", "avg_support_diff_pct", "avg_support_new_pct", "dissimilarity") if k in result},
        "rows": n,
        "suppressed_rows": 0,
        "report": {**result, "search": "generate", "input": source.describe()} if risk else None,
    }
    with rep.phase("write", engine=engine):
        written = write_release(engine, release_query(name, columns, dict(source.columns(engine))), target, source, entry, registry_path)
    phases["write"] = time.perf_counter() - t
    result.update({"output": written.get("output"), "release_id": written.get("release_id"), "written": written.get("output") is not None or written.get("release_id") is not None})
