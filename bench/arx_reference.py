"""ARX's reference optima on Adult, side by side with sqlanon's optimal search (the tests assert them;
this prints the table with the work each case took): nodes evaluated, node statements (a batch of
nodes is one statement), all queries, search seconds (the lattice search alone), nodes per second,
and the whole run's seconds (CSV read, base set, search, verification; no output written).

Issue 26's cases follow: ARX's Loss (``loss``: geometric mean, ``loss-arithmetic``) at k = 10, 100,
500 with 0 % and 5 % suppression, and with 8 QIs (salary-class the sensitive attribute) distinct
2-diversity and equal-distance 0.2-closeness at k = 5, 5 %, precision. ARX's node counts are read
from ``bench/results/arx_node_counts.json`` (each with its source; n/a where no source gives one);
the Loss and model cases have no ARX optimum to compare (``-``). The model cases end with a table
of their nodes, statements and search seconds beside ARX's node count and seconds and issue 26's
goal. ``local`` counts the nodes evaluated in-process over the fetched base set
(:mod:`sqlanon.stats.local`; its compiled kernels are loaded after the unprinted warm-up run, as a
warm process has them; ``--option local_rows=0`` keeps every node in SQL).

The model cases (issue 44) run ``--repeat`` times each (a warm process's later searches), then
once more with every node by SQL (``local_rows=0``: the baseline of the ``SQL/ours`` ratio, in
the same run); ARX 3.9.2's transformations checked and median seconds (a warm JVM, with its load
average then) are read from ``../shared/datasets/adult/arx_reference/arx-3.9.2-adult.json``.
Every row prints the search's CPU seconds (``cpu s``: the process's, every thread's, DuckDB's
among them: what the load does not inflate), the route its nodes took (``histogram``: the
in-process model route, ``local``: the k-only kernels, ``SQL``) and the 1-minute load average
when the case started. The output ends with a table per model case over its repeats: our best
and worst search seconds, ARX's median, the best and worst ratio (ARX s / ours), the worst on
our CPU seconds, and ``2x: yes`` only when the worst wall ratio is at least 2 (issue 44's goal).

    python bench/arx_reference.py [--group arx,loss,models] [--repeat 2] [--search optimal|incognito|samarati] [--option batch=1] [--no-sql] [--out bench/results/arx_reference_models.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bench_output import finish

import sqlanon
from sqlanon.stats import local

HERE = os.path.dirname(os.path.abspath(__file__))
ADULT = os.path.join(HERE, "..", "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
CASES = [
    ("precision", 2, 0.0, [0, 4, 1, 1, 3, 2, 0, 2, 0], 0.6111),
    ("precision", 5, 0.0, [0, 4, 1, 2, 3, 2, 0, 2, 0], 0.6667),
    ("precision", 10, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 0], 0.6667),
    ("precision", 100, 0.0, [0, 4, 1, 2, 3, 2, 2, 1, 0], 0.7222),
    ("precision", 2, 0.05, [0, 4, 0, 0, 1, 1, 0, 1, 0], 0.2896),
    ("precision", 5, 0.05, [0, 4, 0, 0, 3, 1, 0, 1, 0], 0.3656),
    ("precision", 10, 0.05, [0, 4, 0, 0, 3, 1, 0, 2, 0], 0.4140),
    ("precision", 100, 0.05, [0, 4, 0, 2, 3, 1, 1, 2, 0], 0.5753),
    ("entropy", 5, 0.04, [1, 0, 1, 1, 3, 2, 2, 0, 1], 255559.85455731067),
    ("entropy", 100, 0.04, [1, 1, 1, 1, 3, 2, 2, 1, 1], 379417.3460570988),
    ("entropy", 5, 0.0, [1, 2, 1, 1, 3, 2, 2, 1, 1], 407289.5388925293),
    ("entropy", 100, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 1], 453196.8932458743),
]
# issue 26: ARX's Loss, no ARX optimum recorded
LOSS = [(m, k, sup, None, None) for m in ("loss", "loss-arithmetic") for k in (10, 100, 500) for sup in (0.0, 0.05)]
# issue 26: 8 QIs, salary-class sensitive, k=5, 5 %, precision: (label, extra anonymize keywords)
# issue 44: ARX 3.9.2's model cases (../shared/datasets/adult/arx_reference/), each with its k, and
# ordered t-closeness and recursive (c,l)-diversity (no ARX figure): (label, k, extra keywords)
MODELS = [
    ("distinct-2", 5, {"l": 2, "l_diversity": "distinct"}),
    ("0.2-close", 5, {"t": 0.2, "t_distance": "equal"}),
    ("entropy-1.5", 5, {"l": 1.5, "l_diversity": "entropy"}),
    ("hier-0.15", 10, {"t": 0.15, "t_distance": "hierarchical", "t_hierarchy": os.path.join(ADULT, "adult_hierarchy_salary-class.csv")}),
    ("ordered-0.2", 5, {"t": 0.2, "t_distance": "ordered"}),
    ("recursive-4,2", 5, {"l": 2, "c": 4.0, "l_diversity": "recursive"}),
]
ARX_COUNTS = os.path.join(HERE, "results", "arx_node_counts.json")


#: the model cases' ARX 3.9.2 measurements (``id`` in the shared arx_reference JSON; None: no ARX case)
MODEL_KEYS = {"distinct-2": "precision_k5_supp5_8qi_distinct", "0.2-close": "precision_k5_supp5_8qi_tequal", "entropy-1.5": "precision_k5_supp5_8qi_entropy", "hier-0.15": "precision_k10_supp5_8qi_thier", "ordered-0.2": "no ARX case", "recursive-4,2": "no ARX case"}
ARX_392 = os.path.join(os.environ.get("SQLANON_SHARED", os.path.join(HERE, "..", "..", "shared")), "datasets", "adult", "arx_reference", "arx-3.9.2-adult.json")


def arx_case(label: str) -> dict:
    """ARX's figures for a case: a model case's from ARX 3.9.2's measurements (``nodes``: its
    transformations checked, ``seconds``: the median search seconds in a warm JVM, ``load``: the
    load average then, ``node``: its optimum), else from bench/results/arx_node_counts.json
    (``nodes``), or {}."""
    if label.startswith("precision_k") and os.path.isfile(ARX_392):
        with open(ARX_392) as f:
            case = next((c for c in json.load(f)["cases"] if c["id"] == label), None)
        if case is not None:
            return {"nodes": case["transformations_checked"], "seconds": case["search_seconds"]["median"], "load": case["load_average_1min_at_jvm_start"], "node": case["transformation"]}
    with open(ARX_COUNTS) as f:
        return json.load(f)["cases"].get(label) or {}


def arx_nodes(label: str) -> str:
    """ARX's node count for a case, or n/a; ``*`` marks a count from another ARX version than
    3.9.2 (its ``arx_version``: the entropy cases' counts come from ARX 2.x's test suite)."""
    case = arx_case(label)
    return str(case.get("nodes", "n/a")) + ("*" if "arx_version" in case else "")


def run_case(args, options, metric, k, sup, columns, extra):
    """One anonymize call (nothing written); the report and the seconds it took."""
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in columns}
    t = time.perf_counter()
    r = sqlanon.anonymize(input=os.path.join(ADULT, "adult.csv"), delimiter=";", qi=qi, k=k, max_suppression=sup, metric=metric, search=args.search, search_options=options, **extra)
    return r, time.perf_counter() - t


def route_of(r) -> str:
    """The route a case's nodes took: ``histogram`` (the in-process model route,
    :mod:`sqlanon.stats.histograms`), ``local`` (the compiled k-only kernels), ``SQL``, or
    ``mixed`` when only some nodes were in-process."""
    n_local = r.nodes_local or 0
    if not n_local:
        return "SQL"
    kind = "histogram" if (r.local_route or "").startswith("in-process (histograms)") else "local"
    return kind if n_local >= r.nodes_evaluated - 1 else f"{kind}+SQL"


def ratio_table(models: list, out) -> None:
    """Per model case with an ARX figure: our search seconds over the repeats (best, worst), ARX's
    median over them (best and worst ratio), the worst ratio on our search CPU seconds, and whether
    every repeat is at least twice as fast as ARX (issue 44's goal)."""
    out("ARX s / ours per case over its repeats (wall: search seconds; cpu: the search's CPU seconds, every thread's); 2x: the worst wall ratio >= 2")
    out(f"{'case':<15}{'repeats':>8}{'best s':>8}{'worst s':>8}{'ARX s':>8}{'best':>8}{'worst':>8}{'cpu worst':>10}{'loads':>14}  2x")
    for label in dict.fromkeys(m[0] for m in models):
        rows = [m for m in models if m[0] == label]
        arx = arx_case(rows[0][3])
        walls = [m[5] for m in rows]
        cpus = [m[7] for m in rows]
        loads = [m[8] for m in rows]
        load_text = f"{min(loads):.1f}-{max(loads):.1f}"
        if "seconds" not in arx:
            out(f"{label:<15}{len(rows):>8}{min(walls):>8.2f}{max(walls):>8.2f}{'n/a':>8}{'-':>8}{'-':>8}{'-':>10}{load_text:>14}  -")
            continue
        best, worst = arx["seconds"] / max(min(walls), 1e-9), arx["seconds"] / max(max(walls), 1e-9)
        cpu_worst = arx["seconds"] / max(max(cpus), 1e-9)
        out(f"{label:<15}{len(rows):>8}{min(walls):>8.2f}{max(walls):>8.2f}{arx['seconds']:>8.2f}{best:>7.2f}x{worst:>7.2f}x{cpu_worst:>9.2f}x{load_text:>14}  {'yes' if worst >= 2 else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--search", default="optimal")
    ap.add_argument("--group", default="arx,loss,models", help="case groups: arx (ARX's 12 optima), loss, models")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each model case (the figures of every run printed)")
    ap.add_argument("--option", action="append", default=[], help="search option KEY=VALUE (e.g. batch=1, probes=1)")
    ap.add_argument("--no-sql", action="store_true", help="skip the model cases' every-node-by-SQL baseline runs")
    ap.add_argument("--out", help="also write the printed lines to this file")
    args = ap.parse_args()
    options = {k: int(v) for k, v in (o.split("=", 1) for o in args.option)}
    groups = set(args.group.split(","))
    lines: list[str] = []

    def out(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    out(f"load average at the start: {os.getloadavg()[0]:.1f} (2 cores)")
    out(f"{'metric':<16}{'k':>4}{'sup':>6}  {'ARX optimum':<28}{'sqlanon':<28}{'ARX value':>14}{'sqlanon value':>16}{'suppressed':>11}{'nodes':>7}{'local':>6}{'ARX nodes':>10}{'stmts':>6}{'queries':>8}{'search s':>9}{'cpu s':>7}{'nodes/s':>8}{'run s':>7}  {'route':<10}{'load':>5}")
    total = total_search = 0.0
    nodes_total = statements_total = 0
    models: list = []  # (label, nodes, local, ARX key, statements, search s, node, search CPU s, load) of the model cases
    cases = [(m, k, s, a, v, COLUMNS, {}, m) for m, k, s, a, v in (CASES if "arx" in groups else []) + (LOSS if "loss" in groups else [])]
    if "models" in groups:
        # every model case --repeat times (a warm process's later searches beside its first)
        cases += [("precision", k, 0.05, None, None, COLUMNS[:-1], {"sensitive_column": "salary-class", **extra}, label) for label, k, extra in MODELS for _ in range(args.repeat)]
    if cases:  # one unprinted run first, so the first row's seconds are a warm process's like the rest
        metric, k, sup, _, _, columns, extra, _ = cases[0]
        run_case(args, options, metric, k, sup, columns, extra)
    if options.get("local_rows", 1) != 0:
        # a warm process has the in-process evaluator's compiled kernels loaded (sqlanon.stats.local),
        # as ARX's figures are a warm JVM's; a short search in a fresh process stays SQL meanwhile
        local.warm_up(wait=True)
    for metric, k, sup, arx, value, columns, extra, label in cases:
        load = os.getloadavg()[0]
        r, seconds = run_case(args, options, metric, k, sup, columns, extra)
        total += seconds
        search_s = r.extra.get("search_seconds", seconds)
        search_cpu = (r.cpu_timings or {}).get("search", float("nan"))
        total_search += search_s
        nodes_total += r.nodes_evaluated
        statements_total += r.extra.get("statements", 0)
        key = MODEL_KEYS.get(label, f"{metric} k={k} {sup:.0%}")
        node = [r.transformation[c] for c in columns]
        same = "" if arx is None else (" =" if node == arx else " ~")
        arx_text = "-" if arx is None else str(arx)
        arx_value = f"{value:>14.4f}" if value is not None else f"{'-':>14}"
        if extra:
            models.append((label, r.nodes_evaluated, r.nodes_local or 0, key, r.extra.get("statements", 0), search_s, node, search_cpu, load))
        out(f"{label:<16}{k:>4}{sup:>6.0%}  {arx_text:<28}{str(node) + same:<28}{arx_value}{r.metric.value:>16.4f}{r.suppressed_rows:>11}{r.nodes_evaluated:>7}{r.nodes_local or 0:>6}{arx_nodes(key):>10}{r.extra.get('statements', 0):>6}{r.queries:>8}{search_s:>9.2f}{search_cpu:>7.2f}{r.nodes_evaluated / max(search_s, 1e-9):>8.0f}{seconds:>7.1f}  {route_of(r):<10}{load:>5.1f}")
    out(f"total: search {total_search:.1f} s, runs {total:.1f} s, {nodes_total} nodes in {statements_total} statements   (= same node as ARX, ~ a different node with the same value; ARX nodes * = ARX 2.x's test suite)")
    baseline: dict[str, float] = {}
    if models and "local_rows" not in options and not args.no_sql:
        # the same model cases with every node by SQL (local_rows=0), in this run: the ratio's baseline
        for label, k, extra in MODELS:
            r, _ = run_case(args, {**options, "local_rows": 0}, "precision", k, 0.05, COLUMNS[:-1], {"sensitive_column": "salary-class", **extra})
            baseline[label] = r.extra.get("search_seconds", 0.0)
    if models:
        out("models (8 QIs, salary-class sensitive, 5 %, precision; ARX 3.9.2's median seconds in a warm JVM, its load average then): ours beside ARX's")
        out(f"{'case':<15}{'nodes':>7}{'local':>6}{'ARX nodes':>10}{'stmts':>6}{'search s':>9}{'cpu s':>7}{'load':>6}{'ARX s':>7}{'ARX load':>9}{'ARX s/ours':>11}{'SQL s':>7}{'SQL/ours':>9}  node = ARX's")
        for label, nodes, n_local, key, statements, search_s, node, search_cpu, load in models:
            arx = arx_case(key)
            ratio = f"{arx['seconds'] / max(search_s, 1e-9):.2f}x" if "seconds" in arx else "-"
            same = "-" if "node" not in arx else str(arx["node"] == node)
            sql_s = baseline.get(label)
            sql_text = f"{sql_s:>7.2f}{sql_s / max(search_s, 1e-9):>8.2f}x" if sql_s is not None else f"{'-':>7}{'-':>9}"
            out(f"{label:<15}{nodes:>7}{n_local:>6}{arx_nodes(key):>10}{statements:>6}{search_s:>9.2f}{search_cpu:>7.2f}{load:>6.1f}{str(arx.get('seconds', 'n/a')):>7}{str(arx.get('load', '-')):>9}{ratio:>11}{sql_text}  {same}")
        ratio_table(models, out)
    finish(lines, args.out)


if __name__ == "__main__":
    main()
