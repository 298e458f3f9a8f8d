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
# A hand-built relationship tree (adult-full has none; its README suggests this shape).
RELATIONSHIP_TREE = "Husband,Spouse,*\nWife,Spouse,*\nOwn-child,Not-spouse,*\nNot-in-family,Not-spouse,*\nOther-relative,Not-spouse,*\nUnmarried,Not-spouse,*\n"

# The paper's taxonomies. Section 6: "We adopted the taxonomy trees in [5]" (Fung, Wang, Yu, ICDE
# 2005). The authors publish them with their TDS code (github.com/McGill-DMaS/Privacy-TDS,
# exp/erTopN/adultRU0.hchy, CC BY-NC-SA 4.0); re-expressed here as trees (a leaf is ``None`` or a
# list item). Their shape is exactly Table 2's (# leaves / # levels, root and leaves included):
# education 16/5, occupation 14/3, workclass 8/5, marital-status 7/4, relationship 6/3, sex 2/2.
# Branches are of unequal depth (Never-married, Not-in-family, Preschool sit right below a high
# node); the loader pads them by repeating the leaf, and the search and the distortion count the
# real steps.
PAPER_TREES = {
    "marital-status": {"*": {
        "Married": {"Partner-present": ["Married-civ-spouse", "Married-AF-spouse"],
                    "Partner-absent": ["Divorced", "Separated", "Widowed", "Married-spouse-absent"]},
        "Never-married": None}},
    "relationship": {"*": {"In-family": ["Wife", "Own-child", "Husband"], "Not-in-family": None, "Other-relative": None, "Unmarried": None}},
    "sex": {"*": ["Female", "Male"]},
    "education": {"*": {
        "Without-Post-Secondary": {"Preschool": None, "Elementary": ["1st-4th", "5th-6th", "7th-8th"],
                                   "Secondary": {"Junior-Secondary": ["9th", "10th"], "Senior-Secondary": ["11th", "12th", "HS-grad"]}},
        "Post-secondary": {"Some-college": None, "Assoc": ["Assoc-acdm", "Assoc-voc"],
                           "University": {"Bachelors": None, "Prof-school": None, "Post-grad": ["Masters", "Doctorate"]}}}},
    "occupation": {"*": {
        "White-collar": ["Exec-managerial", "Prof-specialty", "Sales", "Adm-clerical"],
        "Blue-collar": ["Tech-support", "Craft-repair", "Machine-op-inspct", "Handlers-cleaners", "Transport-moving", "Priv-house-serv"],
        "Other": ["Protective-serv", "Armed-Forces", "Farming-fishing", "Other-service"]}},
    "workclass": {"*": {
        "Worked": {"With-Pay": {"Private": None, "Self-emp": ["Self-emp-not-inc", "Self-emp-inc"], "Gov": ["Federal-gov", "Local-gov", "State-gov"]},
                   "Without-pay": None},
        "Never-worked": None}},
    # Not used by the top-down benchmark (race and native-country are T2's, kept flat there); the
    # same file's trees for the two other attributes of the 7-attribute VID of Iyengar (KDD 2002)
    # and Wang/Yu/Chakraborty (ICDM 2004), which the file names "restrictive7". Used by
    # bench/bottom_up_adult.py --taxonomies tds and bench/genetic_adult.py --trees tds.
    "race": {"*": {"White": None, "Colored": ["Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]}},
    "native-country": {"*": {
        "North-America": {"USA": ["United-States", "Outlying-US(Guam-USVI-etc)"], "Canada": None},
        "Middle-America": ["Mexico", "Honduras", "Guatemala", "Nicaragua", "El-Salvador"],
        "South-America": {"Western-South-America": ["Ecuador", "Peru"], "Northern-South-America": ["Columbia"],
                          "Caribbean": ["Puerto-Rico", "Dominican-Republic", "Jamaica", "Cuba", "Haiti", "Trinadad&Tobago"]},
        "Europe": {"Western-Europe": ["France", "England", "Ireland", "Scotland", "Holand-Netherlands"],
                   "Southern-Europe": ["Italy", "Greece"], "Southwestern-Europe": ["Portugal"],
                   "Southeastern-Europe": ["Yugoslavia"], "Central-Europe": ["Hungary", "Germany", "Poland"]},
        "Asia": {"Southeastern-Asia": ["Philippines", "Thailand", "Cambodia", "Vietnam", "Laos"], "Southern-Asia": ["India"],
                 "Eastern-Asia": ["Japan", "China", "Hong", "Taiwan", "South"], "Middle-East": ["Iran"]}}},
}

ANJANA_FILES = {"marital-status": "marital.csv", "sex": "sex.csv", "education": "education.csv", "occupation": "occupation.csv", "workclass": "workclass.csv"}
TAXONOMIES = ("paper", "anjana")


def hierarchy_specs(workdir: str, taxonomies: str = "paper", swap: dict[str, str] | None = None) -> dict[str, str]:
    """``--qi`` specs for T1's attributes: ``paper`` (the trees of [5], default) or ``anjana`` (the
    CSVs shipped with adult-full + the hand-built relationship tree). ``swap`` takes single
    attributes from the other set ({attribute: "paper"|"anjana"}), for ablations."""
    import json

    if taxonomies not in TAXONOMIES:
        raise SystemExit(f"--taxonomies must be one of {TAXONOMIES}")
    out = {}
    for a in T1_ATTRS:
        kind = (swap or {}).get(a, taxonomies)
        if kind == "paper":
            path = os.path.join(workdir, f"paper_{a}.json")
            with open(path, "w") as fh:
                json.dump(PAPER_TREES[a], fh)
        elif a == "relationship":
            path = os.path.join(workdir, "relationship.csv")
            with open(path, "w") as fh:
                fh.write(RELATIONSHIP_TREE)
        else:
            path = os.path.join(H, ANJANA_FILES[a])
        out[a] = path
    return out


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
    from sqlanon.search.top_down import planner as top_down
    from sqlanon.search.context import SearchContext
    from sqlanon.run.previous import resolve_previous
    from sqlanon.engine.source import Source
    from sqlanon.privacy.needs import ClassNeeds
    from sqlanon.stats import Statistics

    t0 = time.perf_counter()
    eng = connect(memory_limit=opts.pop("memory_limit", None))
    src = Source.open(t1_path)
    hs = [load_hierarchy(spec, c, eng, src) for c, spec in qi.items()]
    st = Statistics(eng, src, list(qi), hs, class_column=class_column, needs=ClassNeeds(majority_y=class_column is not None))
    st.prepare()
    ctx = SearchContext(st, Requirement([]), None, dict(x=x, y=y, **opts), xy_k=k, previous=[resolve_previous(ref, eng) for ref in previous or []])
    plan = top_down.run(ctx)
    plan.extra["total_seconds"] = time.perf_counter() - t0
    plan.extra["queries"] = eng.queries
    eng.close()
    return plan, hs
