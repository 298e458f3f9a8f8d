"""Shared by the top-down benchmarks: Adult Set A (Wang & Fung 2006, Section 6) as Parquet files and
a helper that runs the planner the way the CLI does (no release written)."""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
SHARED = os.environ.get("SQLANON_SHARED", os.path.abspath(os.path.join(HERE, "..", "..", "shared")))
ADULT = os.path.join(SHARED, "datasets", "adult-full")
H = os.path.join(ADULT, "hierarchies")

T1_ATTRS = ["marital-status", "relationship", "sex", "education", "occupation", "workclass"]  # ranked (Top6 order)
JOIN = ["marital-status", "relationship", "sex"]
T2_ONLY = ["native-country", "race"]
CLASS = "salary-class"
RELATIONSHIP_TREE = "Husband,Spouse,*\nWife,Spouse,*\nOwn-child,Not-spouse,*\nNot-in-family,Not-spouse,*\nOther-relative,Not-spouse,*\nUnmarried,Not-spouse,*\n"


def hierarchy_specs(workdir: str) -> dict[str, str]:
    rel = os.path.join(workdir, "relationship.csv")
    with open(rel, "w") as fh:
        fh.write(RELATIONSHIP_TREE)
    return {
        "marital-status": os.path.join(H, "marital.csv"),
        "relationship": rel,
        "sex": os.path.join(H, "sex.csv"),
        "education": os.path.join(H, "education.csv"),
        "occupation": os.path.join(H, "occupation.csv"),
        "workclass": os.path.join(H, "workclass.csv"),
    }


def load_adult():
    import pandas as pd

    df = pd.read_csv(os.path.join(ADULT, "adult.csv"), skipinitialspace=True, dtype=str)
    df.columns = [c.strip() for c in df.columns]
    df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
    return df


def run_planner(t1_path: str, qi: dict, previous: list[str], x: list[str], y: list[str], k, class_column=CLASS, **opts):
    from sqlanon.engine import connect
    from sqlanon.hierarchy import load_hierarchy
    from sqlanon.privacy import Requirement
    from sqlanon.search import top_down
    from sqlanon.search.context import SearchContext
    from sqlanon.source import Source
    from sqlanon.stats import ClassNeeds, Statistics

    t0 = time.perf_counter()
    eng = connect(memory_limit=opts.pop("memory_limit", None))
    src = Source.open(t1_path)
    hs = [load_hierarchy(spec, c, eng, src) for c, spec in qi.items()]
    st = Statistics(eng, src, list(qi), hs, class_column=class_column, needs=ClassNeeds(majority_y=class_column is not None))
    st.prepare()
    ctx = SearchContext(eng, src, list(qi), hs, st, Requirement([]), None, dict(previous=previous, x=x, y=y, k=k, **opts))
    plan = top_down.run(ctx)
    plan.extra["total_seconds"] = time.perf_counter() - t0
    plan.extra["queries"] = eng.queries
    eng.close()
    return plan, hs
