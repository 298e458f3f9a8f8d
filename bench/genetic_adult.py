"""Iyengar 2002, Figures 6-8 on Adult: genetic search optimizing CM and LM for k = 10 .. 500.

    python bench/genetic_adult.py [--seconds 60] [--ks 10,25,...] [--metrics cm,lm] [--trees paper] [--lattice]
    python bench/genetic_adult.py --seeded 100 --iterations 2000 --seconds 0   # issue 12: seeded GA vs lattice
    python bench/genetic_adult.py --seeded 100 --numeric age --iterations 2000 --seconds 0   # issue 26: age as intervals

Data: ../shared/datasets/adult-full/adult.csv, values trimmed, rows with a '?' dropped (30,162
rows), written once to a Parquet file in --work. QIs: age and education-num numeric (intervals
with an end point between neighbouring values), workclass, marital-status, occupation, race, sex,
native-country categorical (the dataset's hierarchies). Class: salary-class.

``--trees`` picks the categorical taxonomies (``bench/genetic_trees/``):

* ``dataset``: the ANJANA CSVs as they are (with a ``?`` leaf in workclass, occupation and
  native-country, which no complete row holds but which counts in ``M``);
* ``paper`` (default): what the paper says of its trees: work class is Figure 1 (Self-employed /
  Government / Private / Unemployed, 8 leaves), marital status has the nodes Married / Was married /
  Never married (section 5, the k = 250 solution); race and sex flat; occupation and native-country
  the dataset's trees without ``?`` (the paper does not show them);
* ``shaped``: ``paper`` with occupation and native-country replaced by *plausible* trees of the
  shape Iyengar's trees have according to Wang, Yu, Chakraborty (ICDM 2004, Table 1: occupation 14
  leaves / 3 levels, country 41 leaves / 4 levels). Not the paper's trees, which are unpublished.
* ``reconstructed``: ``paper`` with occupation and native-country taken from the TDS authors'
  Adult file (Fung, Wang, Yu, ICDE 2005), the same research group that "obtained their
  hierarchies from the authors of [Iyengar]"; both have exactly the Table 1 shapes above. The
  closest published trees to Iyengar's (still not known to be his).

Prints per (metric, k): CM, LM, suppressed rows, evaluations, evaluations/s, wall seconds, and the
10-fold cross-validated error of a decision tree (scikit-learn, entropy criterion: a C4.5 stand-in)
trained on the released QIs; writes a table (CSV) and a plot (PNG). ``--lattice`` also runs the
optimal full-domain lattice search under LM at k = 10 and 100 (age by the dataset's age hierarchy,
education-num by bands 2,4,8) and scores its best node with the flexible LM for comparison.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SHARED = os.environ.get("SQLANON_SHARED", os.path.abspath(os.path.join(HERE, "..", "..", "shared")))
DATA = os.path.join(SHARED, "datasets", "adult-full")
H = os.path.join(DATA, "hierarchies")
QI = {
    "age": "numeric",
    "workclass": os.path.join(H, "workclass.csv"),
    "education-num": "numeric",
    "marital-status": os.path.join(H, "marital.csv"),
    "occupation": os.path.join(H, "occupation.csv"),
    "race": os.path.join(H, "race.csv"),
    "sex": os.path.join(H, "sex.csv"),
    "native-country": os.path.join(H, "country.csv"),
}
TREES = os.path.join(HERE, "genetic_trees")
PAPER_QI = dict(QI, **{
    "workclass": os.path.join(TREES, "workclass.yaml"),
    "marital-status": os.path.join(TREES, "marital.yaml"),
    "occupation": os.path.join(TREES, "occupation.yaml"),
    "race": os.path.join(TREES, "race.yaml"),
    "sex": os.path.join(TREES, "sex.yaml"),
    "native-country": os.path.join(TREES, "country.yaml"),
})
SHAPED_QI = dict(PAPER_QI, **{
    "occupation": os.path.join(TREES, "occupation_shaped.yaml"),
    "native-country": os.path.join(TREES, "country_shaped.yaml"),
})
RECONSTRUCTED_QI = dict(PAPER_QI, **{
    "occupation": os.path.join(TREES, "occupation_tds.yaml"),
    "native-country": os.path.join(TREES, "country_tds.yaml"),
})
TREE_SETS = {"dataset": QI, "paper": PAPER_QI, "shaped": SHAPED_QI, "reconstructed": RECONSTRUCTED_QI}
CLASS = "salary-class"
PAPER_CM = 0.18
PAPER_LM = {10: 0.21, 500: 0.49}


def clean_parquet(work: str) -> str:
    """The 30,162-row table (bench setup, by DuckDB directly)."""
    import duckdb

    out = os.path.join(work, "adult_clean.parquet")
    if os.path.exists(out):
        return out
    con = duckdb.connect()
    src = os.path.join(DATA, "adult.csv")
    rel = con.read_csv(src, header=True, all_varchar=True, delimiter=",")
    cols = rel.columns
    sel = ", ".join(f'trim("{c}") AS "{c.strip()}"' for c in cols)
    where = " AND ".join(f"trim(\"{c}\") <> '?'" for c in cols)
    con.execute(f"COPY (SELECT {sel} FROM read_csv(?, header=true, all_varchar=true, delim=',') WHERE {where}) TO '{out}' (FORMAT parquet)", [src])
    return out


def context(path, k, metric, options, qi=QI, class_needs=True):
    from sqlanon.engine import connect
    from sqlanon.hierarchy import load_hierarchy
    from sqlanon.metrics import METRICS
    from sqlanon.privacy import KAnonymity, Requirement
    from sqlanon.search.context import SearchContext
    from sqlanon.engine.source import Source
    from sqlanon.privacy.needs import ClassNeeds
    from sqlanon.stats import Statistics

    eng = connect(memory_limit="3GB")
    src = Source.open(path)
    hs = [load_hierarchy(spec, c, eng, src) for c, spec in qi.items()]
    # the class column is read only for CM (an LM-only run leaves it out: the lattice then batches nodes)
    stats = Statistics(eng, src, list(qi), hs, class_column=CLASS, needs=ClassNeeds(majority_y=True)) if class_needs else Statistics(eng, src, list(qi), hs)
    stats.prepare()
    req = Requirement([KAnonymity(k)], budget=stats.rows, max_suppression=1.0)
    return SearchContext(stats, req, METRICS[metric](), dict(options))


def tree_error(path, transformation, qi=QI, folds=10) -> float:
    """10-fold CV error of a decision tree on the released QIs (released values one-hot)."""
    import numpy as np
    import pyarrow.parquet as pq
    from sklearn.model_selection import cross_val_score
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    table = pq.read_table(path, columns=list(qi) + [CLASS]).to_pylist()
    X = [[r[q] for q in qi] for r in table]
    y = np.array([r[CLASS] for r in table])
    if transformation is not None:
        X = release_rows(X, transformation, qi)
    enc = OneHotEncoder(handle_unknown="ignore")
    Xe = enc.fit_transform(X)
    clf = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=5, random_state=0)
    return float(1.0 - cross_val_score(clf, Xe, y, cv=folds).mean())


def release_rows(X, transformation, qi=QI):
    """Apply a released transformation to plain rows (bench only; the library does this in SQL)."""
    from collections import Counter

    from sqlanon.search.genetic.cut import INTERVAL
    from sqlanon.hierarchy import load_hierarchy

    maps = []
    for _j, q in enumerate(qi):
        cut = transformation["transformation"][q]
        if qi[q] == "numeric":
            ivs = [tuple(float(v) for v in INTERVAL.match(c).groups()) for c in cut]
            maps.append(lambda v, ivs=ivs, cut=cut: next(c for c, (lo, hi) in zip(cut, ivs) if float(v) <= hi))
        else:
            rows = load_hierarchy(qi[q], q).rows
            anc = {}
            for r in rows:
                hit = [v for v in cut if v in r]
                anc[r[0]] = hit[0] if hit else "*"
            maps.append(lambda v, anc=anc: anc[v])
    out = [[m(v) for m, v in zip(maps, row)] for row in X]
    k = transformation["k"]
    sizes = Counter(tuple(r) for r in out)
    return [r if sizes[tuple(r)] >= k else ["*"] * len(r) for r in out]


def run_one(path, k, metric, args):
    from sqlanon.search.genetic import planner as genetic

    opts = {"iterations": args.iterations, "population": args.population, "seed": args.seed, "mutation_rate": args.mutation_rate,
            "batch": args.batch, "time_limit": args.seconds, "numeric": ["age", "education-num"]}
    if args.local_rows is not None:
        opts["local_rows"] = args.local_rows
    qi = TREE_SETS[args.trees]
    ctx = context(path, k, metric, opts, qi)
    t0 = time.perf_counter()
    plan = genetic.run(ctx)
    wall = time.perf_counter() - t0
    ns = ctx.stats.evaluate(plan.recoding, ctx.requirement.predicate())
    assert ns.suppressed == plan.suppressed_rows
    row = {
        "trees": args.trees, "metric": metric, "k": k, "cm": round(plan.extra["cm"], 4), "lm": round(plan.extra["lm"], 4),
        "suppressed": plan.suppressed_rows, "evaluations": plan.extra["evaluations"], "iterations": plan.extra["iterations"],
        "evals_per_s": plan.extra["evaluations_per_second"], "seconds": round(wall, 1),
    }
    if not args.no_tree:
        row["tree_error"] = round(tree_error(path, {"transformation": plan.transformation, "k": k}, qi), 4)
    row["lm_per_column"] = json.dumps({q: round(v, 4) for q, v in plan.extra["lm_per_column"].items()})
    row["transformation"] = json.dumps(plan.transformation)
    return row, plan


def education_bands(work: str) -> str:
    """A hierarchy for education-num: bands of 2, 4, 8 over 1..16, then ``*``."""
    edu = os.path.join(work, "education_num_bands.csv")
    with open(edu, "w") as fh:
        for v in range(1, 17):
            fh.write(",".join([str(v)] + [f'"[{(v - 1) // w * w + 1}, {(v - 1) // w * w + w}]"' for w in (2, 4, 8)] + ["*"]) + "\n")
    return edu


def categorical_qi(args) -> dict:
    """Every QI with a hierarchy: age by the dataset's age hierarchy, education-num by bands."""
    return dict(TREE_SETS[args.trees], **{"age": os.path.join(H, "age.csv"), "education-num": education_bands(args.work)})


def seeded_compare(path, k, args) -> list[dict]:
    """Issue 12's figure: with every QI categorical (so the lattice seed applies), the optimal
    full-domain LM, and the genetic search under LM with ``--iterations`` (same seed) started from
    the lattice optimum (``seed_lattice``, the default) and without it; all LM values by the same
    definition (Iyengar's LM, suppressed rows count 1).

    With ``--numeric`` (issue 26: ``age``), the genetic search cuts those QIs into intervals (their
    hierarchies still give the lattice its levels, and the seed the optimum's bands as interval
    cuts); a second lattice row scores the lattice optimum as intervals, the genetic search's own
    measure of that release."""
    from sqlanon.metrics import METRICS
    from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective
    from sqlanon.search.lattice import optimal
    from sqlanon.search.genetic import planner as genetic
    from sqlanon.search.genetic.seeding import node_chromosome
    from sqlanon.search.lattice.lattice import Lattice

    qi = categorical_qi(args)
    numeric = [q for q in args.numeric.split(",") if q]
    ctx = context(path, k, "lm", {}, qi, class_needs=False)
    t0 = time.perf_counter()
    res = optimal.run(Lattice(ctx.stats, ctx.requirement, METRICS["lm"]()))
    rows = [{"k": k, "search": "optimal (full-domain lattice)", "lm": round(res.value, 4), "suppressed": res.node_stats.suppressed,
             "evaluations": res.nodes_evaluated, "seconds": round(time.perf_counter() - t0, 1), "node": list(res.node)}]
    ctx.engine.close()
    if numeric:
        gctx = context(path, k, "lm", {"numeric": numeric}, qi, class_needs=False)
        layout = genetic.layout_for(gctx.qis, gctx.hierarchies, gctx.stats.column_freqs, gctx.options)
        objective, costs = build_objective("lm", {}, None)
        ev = FlexibleEvaluator(gctx.stats, layout, objective, gctx.requirement, costs)
        ev.prepare()
        agg = ev.score([node_chromosome(layout, gctx.hierarchies, res.node)])[0]
        ev.drop()
        rows.append({"k": k, "search": f"  the same node, {'/'.join(numeric)} as intervals", "lm": round(agg["value"], 4), "suppressed": agg["suppressed"],
                     "evaluations": 0, "seconds": 0.0})
        gctx.engine.close()
    for seeded in (True, False):
        opts = {"iterations": args.iterations, "population": args.population, "seed": args.seed, "mutation_rate": args.mutation_rate,
                "batch": args.batch, "seed_lattice": seeded}
        if numeric:
            opts["numeric"] = numeric
        if args.local_rows is not None:
            opts["local_rows"] = args.local_rows
        if args.seconds:
            opts["time_limit"] = args.seconds
        gctx = context(path, k, "lm", opts, qi, class_needs=False)
        t0 = time.perf_counter()
        plan = genetic.run(gctx)
        rows.append({"k": k, "search": f"genetic {'seeded with the lattice optimum' if seeded else 'unseeded'}", "lm": round(plan.extra["lm"], 4),
                     "suppressed": plan.suppressed_rows, "evaluations": plan.extra["evaluations"], "iterations": plan.extra["iterations"],
                     "seconds": round(time.perf_counter() - t0, 1)})
        gctx.engine.close()
    return rows


def lattice_compare(path, k, args):
    """The optimal full-domain node under LM, scored with the flexible LM (same definition)."""
    from sqlanon.metrics import METRICS
    from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective
    from sqlanon.search.lattice import optimal
    from sqlanon.search.genetic import planner as genetic
    from sqlanon.search.lattice.lattice import Lattice

    trees = TREE_SETS[args.trees]
    qi = categorical_qi(args)
    ctx = context(path, k, "lm", {}, qi)
    t0 = time.perf_counter()
    res = optimal.run(Lattice(ctx.stats, ctx.requirement, METRICS["lm"]()))
    node = res.node
    # the node as a flexible solution: numeric QIs as intervals, categorical as level cuts
    gctx = context(path, k, "lm", {"numeric": ["age", "education-num"]}, trees)
    layout = genetic.layout_for(gctx.qis, gctx.hierarchies, gctx.stats.column_freqs, gctx.options)
    t = {}
    for q, h, level in zip(ctx.qis, ctx.hierarchies, node):
        labels = h.labels(level)
        per_leaf = [labels[c] for c in h.leaf_to_level(level)]
        if q in ("age", "education-num"):
            groups = {}
            for leaf, lab in zip(h.leaves, per_leaf):
                groups.setdefault(lab, []).append(float(leaf))
            used = set(float(v) for v in layout.coders[list(QI).index(q)].distinct)
            ivs = sorted((min(vs & used if (vs := set(v)) & used else vs), max(vs & used if vs & used else vs)) for v in groups.values() if set(v) & used)
            t[q] = [f"[{int(lo)}, {int(hi)}]" for lo, hi in ivs]
        else:
            t[q] = h.leaf_to_level(level)  # level code per leaf: a valid cut of the tree
    parts = []
    for q, coder in zip(gctx.qis, layout.coders):
        if coder.numeric:
            parts.append(coder.bits_from_labels(t[q]))
        else:
            group = t[q]
            parts.append([int(group[a] != group[b]) for a, b in zip(coder.order, coder.order[1:])])
    bits = layout.join(parts)
    assert layout.is_valid(bits)
    objective, costs = build_objective("lm", {}, CLASS)
    ev = FlexibleEvaluator(gctx.stats, layout, objective, gctx.requirement, costs)
    ev.prepare()
    agg = ev.score([bits])[0]
    return {"trees": args.trees, "k": k, "node": list(node), "lattice_lm_spine": round(res.value, 4), "lattice_lm_flexible": round(agg["value"], 4),
            "suppressed": agg["suppressed"], "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", default="10,25,50,75,100,150,200,250,500")
    ap.add_argument("--metrics", default="cm,lm")
    ap.add_argument("--seconds", type=float, default=60.0, help="time limit per run")
    ap.add_argument("--iterations", type=int, default=1_000_000)
    ap.add_argument("--population", type=int, default=150)
    ap.add_argument("--mutation-rate", type=float, default=0.005)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/sqlanon_genetic_bench")
    ap.add_argument("--no-tree", action="store_true")
    ap.add_argument("--lattice", action="store_true")
    ap.add_argument("--seeded", type=int, default=None, metavar="K",
                    help="only issue 12's figure at this k: every QI categorical, the optimal lattice LM beside the genetic "
                         "search (--iterations, --seed) seeded with the lattice optimum and unseeded")
    ap.add_argument("--local-rows", type=int, default=None, help="the genetic search's local_rows option (0: every batch by SQL, "
                    "not in-process over the fetched frequency set; default: the search's cap)")
    ap.add_argument("--numeric", default="", help="with --seeded: QIs the genetic search cuts into intervals (e.g. age)")
    ap.add_argument("--trees", choices=sorted(TREE_SETS), default="paper",
                    help="categorical taxonomies: dataset (ANJANA CSVs), paper (default), shaped (see above)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    path = clean_parquet(args.work)
    if args.seeded is not None:
        cut = f"; genetic: {args.numeric} as intervals" if args.numeric else ""
        print(f"Adult {args.trees} trees, every QI categorical (age: age.csv, education-num: bands 2/4/8){cut}, k={args.seeded}, LM; "
              f"genetic: {args.iterations} iterations, population {args.population}, seed {args.seed}", flush=True)
        print(f"{'search':<42}{'LM':>8}{'suppressed':>11}{'evaluations':>12}{'seconds':>9}")
        for r in seeded_compare(path, args.seeded, args):
            print(f"{r['search']:<42}{r['lm']:>8.4f}{r['suppressed']:>11}{r['evaluations']:>12}{r['seconds']:>9.1f}  {r.get('node', '')}", flush=True)
        print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")
        return
    ks = [int(k) for k in args.ks.split(",")]
    rows = []
    if not args.no_tree:
        print(f"decision tree error on the original data: {tree_error(path, None):.4f}", flush=True)
    for metric in [m for m in args.metrics.split(",") if m]:
        for k in ks:
            row, _ = run_one(path, k, metric, args)
            rows.append(row)
            print(json.dumps({k2: v for k2, v in row.items() if k2 not in ("transformation", "lm_per_column")}), flush=True)
    if not rows:
        for k in (10, 100):
            print(json.dumps(lattice_compare(path, k, args)), flush=True)
        return
    tag = args.metrics.replace(",", "_") + f"_{args.trees}"
    out_csv = os.path.join(args.work, f"genetic_adult_{tag}.csv")
    with open(out_csv, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"table: {out_csv}")
    print(f"{'metric':>6} {'k':>4} {'CM':>7} {'LM':>7} {'supp':>6} {'evals':>7} {'ev/s':>6} {'sec':>6} {'tree err':>8}")
    for r in rows:
        print(f"{r['metric']:>6} {r['k']:>4} {r['cm']:>7.4f} {r['lm']:>7.4f} {r['suppressed']:>6} {r['evaluations']:>7} {r['evals_per_s']:>6} {r['seconds']:>6} {r.get('tree_error', float('nan')):>8.4f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        metrics = [m for m in args.metrics.split(",") if m]
        fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4), squeeze=False)
        for ax, metric in zip(axes[0], metrics):
            sel = [r for r in rows if r["metric"] == metric]
            ax.plot([r["k"] for r in sel], [r["cm"] for r in sel], "o-", label="CM")
            ax.plot([r["k"] for r in sel], [r["lm"] for r in sel], "s--", label="LM")
            if "tree_error" in sel[0]:
                ax.plot([r["k"] for r in sel], [r["tree_error"] for r in sel], "^:", label="tree error")
            ax.set_xscale("log")
            ax.set_title(f"optimizing {metric.upper()} (Adult, 8 QIs)")
            ax.set_xlabel("k")
            ax.legend()
        png = os.path.join(args.work, f"genetic_adult_{tag}.png")
        fig.tight_layout()
        fig.savefig(png)
        print(f"plot: {png}")
    except Exception as err:  # pragma: no cover - plotting is optional
        print(f"no plot: {err}")
    if args.lattice:
        for k in (10, 100):
            print(json.dumps(lattice_compare(path, k, args)), flush=True)


if __name__ == "__main__":
    main()
