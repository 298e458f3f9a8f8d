"""Utility of bottom-up generalization on Adult (Wang, Yu, Chakraborty 2004, Section 6.1, Figure 3).

VID = age (its band hierarchy) + the paper's 7 categorical attributes (workclass, education,
marital-status, occupation, race, sex, native-country); ``--no-age``: the paper's VID (the 7
categorical attributes only). Class = salary-class. Rows with ``?`` are dropped: 30,162 rows, which
are exactly the paper's *training* set (adult.data without missing values); its 15,060-row test
set (adult.test) is not in ../shared.

Where the search runs (``--search-on``):

* ``all`` (default; the paper's setting): the search runs once per K on all 30,162 rows, so K means what it
  means in the paper (K records out of 30,162); the found cut is applied to every row, and the
  decision tree's error is measured by cross-validation (``--folds``) on the generalized rows.
  The cut was chosen with the class counts of the held-out rows too (I(G) is a class statistic),
  a small optimism for a cut of 7 attributes.
* ``train``: nested: for each fold the search runs on the training folds only and the cut is
  applied to the held-out fold (no leak, but the search sees (folds-1)/folds of the rows, e.g.
  20,108 rows with ``--folds 3 --only-fold 0``: the same K is then 1.5 times stricter than in the
  paper, relative to the data).

The tree: entropy criterion (C4.5-like), each distinct released value of an attribute a category
(one-hot), min_samples_leaf=MIN_LEAF. B: no generalization; W: every VID attribute ANY (the
majority class); E(K): bottom-up at K.

Taxonomies (``--taxonomies``): ``anjana`` (the CSVs in ../shared), ``paper-like`` (the seven
semantic trees of bench/bottom_up_taxonomies.py, shaped like the paper's Table 1), or
``anjana+education`` (ANJANA with only education replaced by the paper-like 5-level tree).

Prints a table (also written to bench/results/bottom_up_adult[...].md) and a plot. Run e.g.
``python bench/bottom_up_adult.py --no-age --search-on all``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np
import pyarrow as pa
from sqlglot import exp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sqlanon.engine import connect  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.bottom_up import planner as bottom_up  # noqa: E402
from sqlanon.search.context import SearchContext  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.expr.atoms import col, table_ref  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402
from sqlanon.expr.atoms import lit  # noqa: E402

import bottom_up_taxonomies as paper_tax  # noqa: E402

DATA = os.path.abspath(os.path.join(HERE, "..", "..", "shared", "datasets", "adult-full"))
HIER = {
    "age": "age.csv",
    "workclass": "workclass.csv",
    "education": "education.csv",
    "marital-status": "marital.csv",
    "occupation": "occupation.csv",
    "race": "race.csv",
    "sex": "sex.csv",
    "native-country": "country.csv",
}
CLASS = "salary-class"
KS = [10, 25, 50, 75, 100, 150, 200, 250, 500]
MIN_LEAF = 10
PAPER = {"B": 17.4, "W": 24.6, "E-B max": 1.1, "W-B": 7.2}


def load_rows(path: str) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, skipinitialspace=True)
        header = [h.strip() for h in next(reader)]
        rows = [[c.strip() for c in r] for r in reader if r]
    rows = [r for r in rows if len(r) == len(header) and "?" not in r]
    return header, rows


def load_hierarchy(column: str, path: str, present: set[str]) -> Hierarchy:
    """The shared CSVs repeat some rows and list ``?``: keep one row per leaf, drop ``?``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [[c.strip() for c in r] for r in csv.reader(fh, skipinitialspace=True) if r]
    seen, out = set(), []
    for r in rows:
        if r[0] in seen or r[0] == "?":
            continue
        seen.add(r[0])
        out.append(r)
    missing = present - seen
    if missing:
        raise SystemExit(f"{column}: values missing from {path}: {sorted(missing)[:5]}")
    return Hierarchy(attribute=column, rows=out, origin=path, numeric=column == "age")


def tree_error(train_X, train_y, test_X, test_y) -> float:
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    enc = OneHotEncoder(handle_unknown="ignore")
    a = enc.fit_transform(train_X)
    b = enc.transform(test_X)
    clf = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=MIN_LEAF, random_state=0)
    clf.fit(a, train_y)
    return float(np.mean(clf.predict(b) != test_y))


def hierarchies_for(kind: str, qis: list[str], qidx: list[int], rows: list[list[str]]) -> list[Hierarchy]:
    out = []
    for q, i in zip(qis, qidx):
        present = {r[i] for r in rows}
        if q in paper_tax.PAPER_LIKE and kind in ("tds", "reconstructed"):
            out.append(paper_tax.hierarchy(q, present, kind=kind))
        elif q in paper_tax.PAPER_LIKE and (kind == "paper-like" or (kind == "anjana+education" and q == "education")):
            out.append(paper_tax.hierarchy(q, present))
        else:
            out.append(load_hierarchy(q, os.path.join(DATA, "hierarchies", HIER[q]), present))
    return out


def search_cut(engine, table: str, where, qis, hierarchies, k: int, budget: int):
    """Run the bottom-up search on ``table`` (rows matching ``where``); its plan."""
    name = engine.temp_name("bu_train")
    q = exp.select(*[col(c) for c in qis + [CLASS]]).from_(table_ref(table))
    if where is not None:
        q = q.where(where)
    engine.execute(engine.dialect.create_temp(name, q))
    source = Source(kind="table", table=name)
    stats = Statistics(engine, source, qis, hierarchies, class_column=CLASS, needs=ClassNeeds(majority_y=True))
    stats.prepare()
    ctx = SearchContext(stats, Requirement([KAnonymity(k)], budget=budget), None, {})
    return bottom_up.run(ctx)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--only-fold", type=int, default=None, help="evaluate one fold only: a fixed split (e.g. --folds 3 --only-fold 0 = 2/3 train, 1/3 test)")
    ap.add_argument("--no-age", action="store_true", help="the paper's VID: the 7 categorical attributes only")
    ap.add_argument("--search-on", choices=["all", "train"], default="all", help="all: search once on all 30,162 rows (the paper's training set and K scale); train: on the training folds only")
    ap.add_argument("--taxonomies", choices=["anjana", "reconstructed", "tds", "paper-like", "anjana+education"], default="anjana")
    ap.add_argument("--max-suppression", type=float, default=0.0, help="suppression budget (fraction of rows; the paper has none)")
    args = ap.parse_args()
    tag = (
        "bottom_up_adult"
        + ("_noage" if args.no_age else "")
        + ("_all" if args.search_on == "all" else "")
        + ("" if args.taxonomies == "anjana" else "_" + args.taxonomies.replace("+", "_").replace("-", ""))
        + (f"_sup{args.max_suppression:g}" if args.max_suppression else "")
    )
    ks = [int(k) for k in args.ks.split(",")]
    header, rows = load_rows(os.path.join(DATA, "adult.csv"))
    qis = [q for q in HIER if not (args.no_age and q == "age")]
    qidx = [header.index(q) for q in qis]
    cidx = header.index(CLASS)
    print(f"Adult: {len(rows):,} rows without '?'; VID = {', '.join(qis)}; class = {CLASS}; taxonomies = {args.taxonomies}; search on {args.search_on}")
    hierarchies = hierarchies_for(args.taxonomies, qis, qidx, rows)
    X = np.array([[r[i] for i in qidx] for r in rows], dtype=object)
    y = np.array([r[cidx] for r in rows], dtype=object)
    rng = np.random.default_rng(args.seed)
    fold = rng.permutation(len(rows)) % args.folds

    engine = connect(database=":memory:", memory_limit="2GB")
    table = {q: pa.array(X[:, j].tolist(), pa.string()) for j, q in enumerate(qis)}
    table[CLASS] = pa.array(y.tolist(), pa.string())
    table["fold"] = pa.array(fold.tolist(), pa.int32())
    engine.register_arrow("adult", pa.table(table))

    def generalize(plan):
        maps = [dict(zip(h.leaves, plan.recoding.values(i))) for i, h in enumerate(hierarchies)]
        return np.array([[maps[j][v] for j, v in enumerate(row)] for row in X], dtype=object)

    errors = {"B": [], "W": [], **{k: [] for k in ks}}
    steps = {k: [] for k in ks}
    seconds = {k: [] for k in ks}
    cuts = {}
    shared = {}
    if args.search_on == "all":
        for k in ks:
            t0 = time.perf_counter()
            plan = search_cut(engine, "adult", None, qis, hierarchies, k, int(args.max_suppression * len(rows)))
            seconds[k].append(time.perf_counter() - t0)
            steps[k].append(plan.extra["steps"])
            cuts[k] = plan.transformation
            shared[k] = generalize(plan)
    for f in range(args.folds) if args.only_fold is None else [args.only_fold]:
        train, test = fold != f, fold == f
        errors["B"].append(tree_error(X[train], y[train], X[test], y[test]))
        ones = np.zeros((int(train.sum()), 1), dtype=object)
        errors["W"].append(tree_error(ones, y[train], np.zeros((int(test.sum()), 1), dtype=object), y[test]))
        for k in ks:
            if args.search_on == "all":
                gen = shared[k]
            else:
                t0 = time.perf_counter()
                plan = search_cut(engine, "adult", exp.NEQ(this=col("fold"), expression=lit(f)), qis, hierarchies, k, int(args.max_suppression * int(train.sum())))
                seconds[k].append(time.perf_counter() - t0)
                steps[k].append(plan.extra["steps"])
                cuts[k] = plan.transformation
                gen = generalize(plan)
            errors[k].append(tree_error(gen[train], y[train], gen[test], y[test]))
        print(f"fold {f + 1}/{args.folds}: B={100 * errors['B'][-1]:.2f}%  " + "  ".join(f"K={k}:{100 * errors[k][-1]:.2f}%" for k in ks), flush=True)

    if args.search_on == "all":
        evaluation = f"search on all {len(rows):,} rows, tree error by {args.folds}-fold CV" if args.only_fold is None else f"search on all {len(rows):,} rows, tree error on fold {args.only_fold} of {args.folds}"
    else:
        evaluation = f"nested {args.folds}-fold CV (search on the training folds)" if args.only_fold is None else f"fixed split, fold {args.only_fold} of {args.folds} held out (search on the rest)"
    B = 100 * float(np.mean(errors["B"]))
    W = 100 * float(np.mean(errors["W"]))
    lines = [
        f"# Bottom-up generalization on Adult ({len(rows):,} rows, VID = {', '.join(qis)}, taxonomies {args.taxonomies}, max suppression {args.max_suppression:g}, {evaluation}, decision tree: entropy, one-hot, min_samples_leaf={MIN_LEAF})",
        "",
        f"Command: `python bench/bottom_up_adult.py {' '.join(sys.argv[1:])}`",
        "",
        f"B (no generalization) = {B:.2f}%   W (all VID = ANY) = {W:.2f}%   W - B = {W - B:.2f}%   (paper: B = {PAPER['B']}%, W = {PAPER['W']}%, W - B = {PAPER['W-B']}%)",
        "",
        "| K | E (%) | E - B (%) | steps (mean) | search s (mean) | cut (last search): attributes not generalized to ANY |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    worst = 0.0
    for k in ks:
        E = 100 * float(np.mean(errors[k]))
        worst = max(worst, E - B)
        kept = "; ".join(f"{q} ({len(v)})" for q, v in cuts[k].items() if v != ["*"]) or "none"
        lines.append(f"| {k} | {E:.2f} | {E - B:+.2f} | {np.mean(steps[k]):.1f} | {np.mean(seconds[k]):.3f} | {kept} |")
    lines += ["", f"max E - B = {worst:.2f}% (paper: <= {PAPER['E-B max']}% with W - B = {PAPER['W-B']}%)"]
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, tag + ".md"), "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        xs = list(range(len(ks)))
        ax.plot(xs, [100 * np.mean(errors[k]) for k in ks], "o-", label="E (bottom-up)")
        ax.axhline(B, color="green", ls="--", label=f"B = {B:.2f}%")
        ax.axhline(W, color="red", ls=":", label=f"W = {W:.2f}%")
        ax.set_xticks(xs, [str(k) for k in ks])
        ax.set_xlabel("K")
        ax.set_ylabel("error %")
        ax.set_title(f"Adult, VID = {'7 categorical' if args.no_age else 'age + 7 categorical'}, {args.taxonomies}, search on {args.search_on}", fontsize=9)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, tag + ".png"), dpi=120)
        print(f"plot: {os.path.join(args.out, tag + '.png')}")
    except ImportError:
        print("matplotlib missing: no plot")


if __name__ == "__main__":
    main()
