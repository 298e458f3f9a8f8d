"""Does evaluating several lattice nodes in one statement help? (spine issue: "measure whether it does")

Takes the nodes of one height of the Adult lattice (or of an Adult-like Parquet file) and computes,
for each, the class count and the rows in classes smaller than k, in three ways over the same
integer-coded base frequency set:

* one statement per node (what sqlanon does: ``Statistics.evaluate``),
* one ``GROUPING SETS`` statement over all the nodes' generalized codes,
* one ``UNION ALL`` statement of the per-node aggregates.

    python bench/grouping_sets.py                       # Adult, 30K rows
    python bench/grouping_sets.py --input bench/out/adult_1m.parquet
"""

from __future__ import annotations

import argparse
import os
import time

from sqlglot import exp

from sqlanon.engine import connect
from sqlanon.hierarchy import read_csv_hierarchy
from sqlanon.privacy import KAnonymity, Requirement
from sqlanon.search.lattice.lattice import Lattice
from sqlanon.metrics import METRICS
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import col, table_ref
from sqlanon.stats import Statistics
from sqlanon.expr.atoms import lit, sum_, if_
from sqlanon.dialect import lookup

HERE = os.path.dirname(os.path.abspath(__file__))
ADULT = os.path.join(HERE, "..", "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--input", default=os.path.join(ADULT, "adult.csv"))
    ap.add_argument("--height", type=int, default=10)
    ap.add_argument("--nodes", type=int, default=24)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    engine = connect()
    source = Source.open(args.input, delimiter=";" if args.input.endswith(".csv") else None)
    hs = [read_csv_hierarchy(os.path.join(ADULT, f"adult_hierarchy_{c}.csv"), c) for c in COLUMNS]
    stats = Statistics(engine, source, COLUMNS, hs)
    stats.prepare()
    lattice = Lattice(stats, Requirement([KAnonymity(args.k)]), METRICS["height"]())
    nodes = [lattice.node(int(i)) for i in (lattice.height == args.height).nonzero()[0][: args.nodes]]
    ok = exp.GTE(this=col("cnt"), expression=lit(args.k))
    print(f"{stats.rows:,} rows, base frequency set {stats.base.rows:,} tuples, {len(nodes)} nodes of height {args.height}")

    t = time.perf_counter()
    single = [stats.evaluate(n, ok) for n in nodes]
    t_single = time.perf_counter() - t

    # GROUPING SETS: generalized codes for every QI at every level used by some node
    cols, sets = {}, []
    for n in nodes:
        s = []
        for i, level in enumerate(n):
            name = f"g{i}_{level}"
            cols[name] = lookup(stats.hierarchies[i].leaf_to_level(level), col(stats.qcol(i)), "duckdb")
            s.append(name)
        sets.append(s)
    inner = exp.select(*[exp.alias_(e, n) for n, e in cols.items()], col("cnt")).from_(table_ref(stats.base.table))
    grouping_id = exp.Anonymous(this="GROUPING_ID", expressions=[exp.column(n) for n in cols])
    gs = exp.GroupingSets(expressions=[exp.Tuple(expressions=[exp.column(c) for c in s]) for s in sets])
    per_class = (
        exp.select(exp.alias_(grouping_id, "gid"), exp.alias_(sum_(col("cnt")), "c"))
        .from_(exp.alias_(exp.Subquery(this=inner), "x", table=True))
        .group_by(gs)
    )
    final = exp.select(col("gid"), exp.Count(this=exp.Star()), sum_(if_(exp.LT(this=col("c"), expression=lit(args.k)), col("c"), lit(0))))
    final = final.from_(exp.alias_(exp.Subquery(this=per_class), "y", table=True)).group_by(col("gid"))
    t = time.perf_counter()
    grouped = engine.fetch_all(final)
    t_grouping = time.perf_counter() - t

    # UNION ALL of the per-node statements
    parts = [exp.select("*").from_(exp.alias_(exp.Subquery(this=stats.node_query(n, ok)), f"n{i}", table=True)) for i, n in enumerate(nodes)]
    union = parts[0]
    for p in parts[1:]:
        union = exp.union(union, p, distinct=False)
    t = time.perf_counter()
    unioned = engine.fetch_all(union)
    t_union = time.perf_counter() - t

    t = time.perf_counter()
    _again = [stats.evaluate(n, ok) for n in nodes]
    t_single2 = time.perf_counter() - t
    t_single = min(t_single, t_single2)  # the per-node pass, warm (run before and after the others)

    assert sorted((r[1], int(r[2])) for r in grouped) == sorted((s.classes, s.suppressed) for s in single)
    assert sorted((r[0], int(r[4])) for r in unioned) == sorted((s.classes, s.suppressed) for s in single)
    print(f"one statement per node : {t_single:7.3f} s ({t_single / len(nodes) * 1000:.1f} ms/node)")
    print(f"one GROUPING SETS      : {t_grouping:7.3f} s ({t_grouping / t_single:.2f}x the per-node time)")
    print(f"one UNION ALL          : {t_union:7.3f} s ({t_union / t_single:.2f}x the per-node time)")


if __name__ == "__main__":
    main()
