"""``sqlanon generate``: frequency set -> candidates -> KRIMP code table -> generated rows -> scores
-> release (Parquet/CSV, a new table, or in place) recorded in the release registry.

Nothing is written before the generated table and its scores are final; the generated rows are
held in a temp table of the engine while they are scored, then written by the shared release
writer (one transaction for table targets, write-beside-and-rename for files).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.generate import itemsets as its
from sqlanon.generate.generator import GeneratorModel, generate
from sqlanon.generate.krimp import krimp
from sqlanon.generate.scores import compare_tables
from sqlanon.source import Source, col, table_ref


def generated_arrow(enc: its.Encoded, rows: np.ndarray) -> pa.Table:
    """Generated item ids -> the original values (as text), one column per source column."""
    labels = np.asarray(enc.item_labels, dtype=object)
    return pa.table({name: pa.array(labels[rows[:, j]].tolist(), pa.string()) for j, name in enumerate(enc.columns)})


def release_query(table: str, columns: list[str], types: dict[str, str]) -> exp.Select:
    """``SELECT CAST(col AS <source type>) AS col, ... FROM generated`` (values were read as text)."""
    outs = []
    for c in columns:
        t = types.get(c, "VARCHAR")
        e = col(c)
        if t.upper() != "VARCHAR":
            e = exp.Cast(this=e, to=exp.DataType.build(t, dialect="duckdb"))
        outs.append(exp.alias_(e, c, quoted=True))
    return exp.select(*outs).from_(table_ref(table))


def write_release(engine, query: exp.Select, target, source: Source, entry: dict, registry_path: str | None = None) -> dict:
    """Write through the shared release writer (``sqlanon.release``)."""
    from sqlanon import release

    if target is None or target.kind == "none":
        return {"output": None, "release_id": None}
    entry = dict(entry)
    entry.setdefault("input_hash", release.input_hash(engine, source))
    entry["target"] = target.describe()
    return release.write_query(engine, query, target, source, entry, registry_path=registry_path)


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
    progress: Callable[[str], None] | None = None,
    risk: bool = True,
    population_fraction: float | None = None,
) -> dict:
    """Build the code table, generate ``rows`` rows (default: as many as the source), score, write."""
    say = progress or (lambda message: None)
    t_start = time.perf_counter()
    phases: dict[str, float] = {}
    if columns is None:
        columns = source.column_names(engine)
    if candidates not in ("all", "closed"):
        raise ConfigError(f"--candidates must be all or closed, got {candidates!r}")
    if not (laplace > 0):
        raise ConfigError(f"--laplace must be > 0, got {laplace}")
    if min_sup < 1:
        raise ConfigError(f"--min-sup must be at least 1, got {min_sup}")
    if rows is not None and int(rows) < 1:
        raise ConfigError(f"--rows must be at least 1, got {rows}")

    t = time.perf_counter()
    enc = its.encode(engine, source, list(columns))
    cands = its.mine(engine, enc, min_sup, candidates)
    phases["mine"] = time.perf_counter() - t
    say(f"{enc.n_rows} rows, {len(enc.db.weights)} distinct, {enc.db.n_items} items, {len(cands)} {candidates} candidates at min_sup {min_sup}")

    t = time.perf_counter()
    ct = krimp(enc.db, cands.items, cands.support)
    phases["krimp"] = time.perf_counter() - t
    say(f"code table: {ct.non_singletons} non-singleton elements, L% {ct.compression_ratio:.2f}")

    t = time.perf_counter()
    model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(columns), laplace)
    n = enc.n_rows if rows is None else int(rows)
    gen = generate(model, n, seed)
    name = engine.temp_name("generated")
    engine.register_arrow(name, generated_arrow(enc, gen))
    phases["generate"] = time.perf_counter() - t

    result: dict = {
        "rows": n,
        "columns": list(columns),
        "candidates": candidates,
        "candidate_count": len(cands),
        "min_sup": min_sup,
        "laplace": laplace,
        "seed": seed,
        "code_table_size": ct.non_singletons,
        "compression_ratio": ct.compression_ratio,
        "total_bits": ct.total_bits,
        "standard_bits": ct.standard_bits,
    }
    if scores:
        t = time.perf_counter()
        gen_source = Source(kind="table", table=name)
        sc = compare_tables(engine, gen_source, source, list(columns), min_sup, candidates, dissimilarity_measure=dissimilarity, original=(enc, ct))
        phases["scores"] = time.perf_counter() - t
        result.update(sc)
        say(f"NAS {sc['nas']:.3f}, {sc['pct_equal_itemsets']:.1f}% equal itemsets" + (f", dissimilarity {sc['dissimilarity']:.3f}" if "dissimilarity" in sc else ""))

    if risk:  # re-identification risk of the input and of the generated table, every column a QI
        from sqlanon.risk.measure import measure_table

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
