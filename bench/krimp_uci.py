"""KRIMP code tables and the generator on the UCI data of the data-generation paper (Table 1).

    python bench/krimp_uci.py [--runs 10] [--only mushroom] [--extras] [--data /work/shared/datasets/uci-krimp]

Main table, one subprocess per data set and setting (so each peak RSS is its own): candidates,
non-singleton code-table elements ours / the reference (the data's README), L% ours / reference,
NAS (mean of --runs generated tables, seeds 0..runs-1) ours / the paper's Table 1, seconds per
phase (encode: the SQL frequency set; mine; krimp; generate: one table; e2e: the four together;
scores: one ``compare_tables`` with dissimilarity, as ``sqlanon generate`` runs it) and peak RSS.
The load average is printed with it: timings on a shared machine are not idle figures.

``--extras`` adds the older experiments, in-process: the generator's other scores against the
paper, NAS of a table against itself, the paper's "Orig. internal" baseline (dissimilarity of
random half-size samples), and the Laplace correction: per value, the exact expected NAS and
share of generated rows that copy an original row (``expected_anonymity``), the sampled mean
NAS of --runs runs, and -- as an ablation, not the paper's generator -- the exact NAS with the
correction on singletons only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from sqlanon.engine import connect
from sqlanon.generation import itemsets as its
from sqlanon.generation.generator import GeneratorModel, expected_anonymity, generate
from sqlanon.generation.krimp import krimp
from sqlanon.generation.pipeline import generated_arrow
from sqlanon.generation.scores import (
    LabelledCodeTable,
    anonymity_scores,
    compare_tables,
    dissimilarity,
)
from sqlanon.engine.source import Source

CODE_TABLES = [  # data, candidates, reference non-singletons, reference L%
    ("iris", "all", 13, 45.65),
    ("pima", "all", 58, 34.09),
    ("pima", "closed", 50, 34.30),
    ("led7", "all", 152, 28.53),
    ("nursery", "all", 260, 45.47),
]
SETTINGS = [  # data, candidates, min_sup, reference candidates (all lengths), non-singletons, L%
    ("iris", "all", 1, None, 13, 45.65),
    ("pima", "all", 1, None, 58, 34.09),
    ("pima", "closed", 1, None, 50, 34.30),
    ("led7", "all", 1, None, 152, 28.53),
    ("nursery", "all", 1, None, 260, 45.47),
    ("mushroom", "closed", 20, 109_304, 202, 24.96),
    ("mushroom", "closed", 1, 238_709, 206, 24.63),
]
PAPER_NAS = {"iris": 0.72, "led7": 0.66, "nursery": 0.49, "pima": 0.64, "mushroom": 0.09}
DEFAULT_DATA = os.path.join(os.environ.get("SQLANON_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")), "datasets", "uci-krimp")


def one(data: str, name: str, cands: str, min_sup: int, runs: int) -> dict:
    """One data set and setting, as ``sqlanon generate`` runs it, phase by phase."""
    engine = connect()
    src = Source.open(os.path.join(data, f"{name}.csv"), "csv")
    out: dict = {"phases": {}}
    t = time.perf_counter()
    enc = its.encode(engine, src, src.column_names(engine))
    out["phases"]["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    c = its.mine(engine, enc, min_sup, cands, min_length=1)
    out["phases"]["mine"] = time.perf_counter() - t
    out["candidates"] = len(c)
    t = time.perf_counter()
    ct = krimp(enc.db, c)
    out["phases"]["krimp"] = time.perf_counter() - t
    del c
    out.update(size=ct.non_singletons, lpct=ct.compression_ratio)
    model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(enc.columns), 0.001)
    nas, gen_secs = [], []
    for seed in range(runs):
        t = time.perf_counter()
        rows = generate(model, enc.n_rows, seed)
        tname = engine.temp_name("gen")
        engine.register_arrow(tname, generated_arrow(enc, rows))
        gen_secs.append(time.perf_counter() - t)
        nas.append(anonymity_scores(engine, Source(kind="table", table=tname), src, enc.columns)["nas"])
        if seed == 0:
            t = time.perf_counter()
            sc = compare_tables(engine, Source(kind="table", table=tname), src, enc.columns, min_sup, cands, original=(enc, ct))
            out["phases"]["scores"] = time.perf_counter() - t
            out["pct_equal_itemsets"], out["dissimilarity"] = sc["pct_equal_itemsets"], sc.get("dissimilarity")
        engine.execute(its.drop_table(tname, engine.dialect))
    out["phases"]["generate"] = statistics.mean(gen_secs) if gen_secs else 0.0
    out["nas"] = statistics.mean(nas) if nas else None
    out["nas_sd"] = statistics.pstdev(nas) if len(nas) > 1 else 0.0
    p = out["phases"]
    p["e2e"] = p["encode"] + p["mine"] + p["krimp"] + p["generate"]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def table(args) -> None:
    load0 = os.getloadavg()
    print(f"== KRIMP code tables and the generator (Laplace 0.001, NAS mean of {args.runs}); load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, {os.cpu_count()} cores ==")
    print(f"{'data':<9}{'setting':<11}{'cands':>9} {'elems':>9} {'L%':>13} {'NAS':>11} {'encode':>7}{'mine':>7}{'krimp':>7}{'gen':>6}{'e2e':>7}{'scores':>8} {'RSS MB':>7} {'%eq':>5} {'diss':>6}")
    for name, cands, min_sup, ref_c, ref_size, ref_l in SETTINGS:
        if args.only and name not in args.only:
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--one", f"{name}:{cands}:{min_sup}", "--runs", str(args.runs), "--data", args.data]
        got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        p = got["phases"]
        c = f"{got['candidates']:,}" + ("" if ref_c is None else ("=" if got["candidates"] == ref_c else f"/{ref_c:,}"))
        ok = "ok" if got["size"] == ref_size and round(got["lpct"], 2) == ref_l else "OFF"
        eq = "n/a" if got.get("pct_equal_itemsets") is None else f"{got['pct_equal_itemsets']:.1f}"
        ds = "" if got.get("dissimilarity") is None else f"{got['dissimilarity']:.3f}"
        print(f"{name:<9}{cands + '-' + str(min_sup):<11}{c:>9} {got['size']:>4}/{ref_size:<4} {got['lpct']:>6.2f}/{ref_l:<6.2f} {got['nas']:.3f}/{PAPER_NAS[name]:.2f} "
              f"{p['encode']:>7.2f}{p['mine']:>7.2f}{p['krimp']:>7.2f}{p['generate']:>6.2f}{p['e2e']:>7.2f}{p['scores']:>8.2f} {got['peak_rss_mb']:>7.0f} {eq:>5} {ds:>6} {ok}", flush=True)
    load1 = os.getloadavg()
    print(f"load average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}. Reference candidates: closed itemsets of all lengths (the README's count); elems: non-singletons with usage > 0.")

PAPER = {  # NAS, % equal, avg sup diff, avg sup new, dissimilarity; README NAS range
    "iris": (0.72, 83, 1.69, 0.80, 0.158, (0.62, 0.80)),
    "led7": (0.66, 89, 0.14, 0.06, 0.171, (0.58, 0.72)),
    "nursery": (0.49, 90, 0.04, 0.03, 0.045, (0.43, 0.55)),
    "pima": (0.64, 60, 0.30, 0.14, 0.177, (0.55, 0.70)),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--one", default=None, help="(internal) one data:candidates:min_sup, JSON on stdout")
    ap.add_argument("--extras", action="store_true", help="also the older experiments (in-process)")
    ap.add_argument("--dissimilarity-runs", type=int, default=3, help="runs (per data set) that also run KRIMP on the output")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--internal-runs", type=int, default=3, help="half-size samples per data set for the internal baseline (0: skip)")
    ap.add_argument("--internal-skip", nargs="*", default=["nursery"], help="data sets without the internal baseline (KRIMP per sample)")
    ap.add_argument("--laplace", nargs="*", type=float, default=[0.001, 0.1, 1.0, 10.0, 100.0])
    args = ap.parse_args()
    if args.one:
        name, cands, min_sup = args.one.split(":")
        print(json.dumps(one(args.data, name, cands, int(min_sup), args.runs)))
        return
    table(args)
    if args.extras:
        extras(args)


def extras(args) -> None:
    engine = connect()
    built = {}
    print("== KRIMP code tables (min_sup 1) ==")
    print(f"{'data':<8} {'cands':<7} {'#cands':>8} {'size':>5} {'ref':>5} {'L%':>7} {'ref L%':>7} {'bits':>16} {'secs':>6}")
    for name, cands, ref_size, ref_l in CODE_TABLES:
        if args.only and name not in args.only:
            continue
        src = Source.open(os.path.join(args.data, f"{name}.csv"), "csv")
        t = time.perf_counter()
        enc = its.encode(engine, src, src.column_names(engine))
        c = its.mine(engine, enc, 1, cands)
        ct = krimp(enc.db, c)
        secs = time.perf_counter() - t
        ok = abs(ct.compression_ratio - ref_l) <= 0.5 and abs(ct.non_singletons - ref_size) <= 0.05 * ref_size
        print(f"{name:<8} {cands:<7} {len(c):>8} {ct.non_singletons:>5} {ref_size:>5} {ct.compression_ratio:>7.2f} {ref_l:>7.2f} "
              f"{round(ct.total_bits):>7}/{round(ct.standard_bits):<8} {secs:>6.1f} {'ok' if ok else 'OFF'}", flush=True)
        if cands == "all":
            built[name] = (src, enc, ct)

    print(f"\n== generator: Laplace 0.001, rows = original, mean of {args.runs} runs (seeds 0..{args.runs - 1}) ==")
    print(f"{'data':<8} {'NAS':>6} {'range':>11} {'paper':>6} {'%equal':>7} {'paper':>6} {'supdiff':>8} {'paper':>6} {'supnew':>7} {'paper':>6} {'dissim':>7} {'paper':>6}")
    for name in ("iris", "led7", "nursery", "pima"):
        if name not in built:
            continue
        src, enc, ct = built[name]
        model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(enc.columns), 0.001)
        orig_pat = its.mine(engine, enc, 1, "all", min_length=1)
        res = []
        for seed in range(args.runs):
            gen = generate(model, enc.n_rows, seed)
            tname = engine.temp_name("gen")
            engine.register_arrow(tname, generated_arrow(enc, gen))
            want_ds = seed < args.dissimilarity_runs
            r = compare_tables(engine, Source(kind="table", table=tname), src, enc.columns, 1, "all", dissimilarity_measure=want_ds, original=(enc, ct), original_patterns=orig_pat)
            engine.execute(its.drop_table(tname, engine.dialect))
            res.append(r)

        def mean(k, res=res):
            return statistics.mean(r[k] for r in res if k in r)

        p = PAPER[name]
        nas = mean("nas")
        verdict = "ok" if p[5][0] <= nas <= p[5][1] else "OFF"
        print(f"{name:<8} {nas:>6.3f} {p[5][0]:>5.2f}-{p[5][1]:<5.2f} {p[0]:>6.2f} {mean('pct_equal_itemsets'):>7.1f} {p[1]:>6} "
              f"{mean('avg_support_diff_pct'):>8.2f} {p[2]:>6.2f} {mean('avg_support_new_pct'):>7.2f} {p[3]:>6.2f} "
              f"{mean('dissimilarity'):>7.3f} {p[4]:>6.3f} {verdict}  (NAS sd {statistics.pstdev(r['nas'] for r in res):.3f})", flush=True)

    print("\n== NAS of a table against itself ==")
    for name, (src, enc, _ct) in built.items():
        print(f"{name:<8} {anonymity_scores(engine, src, src, enc.columns)['nas']:.3f}")

    internal = {"iris": 0.047, "led7": 0.028, "nursery": 0.011, "pima": 0.110}  # paper, Table 1
    if args.internal_runs > 0:
        print(f"\n== internal baseline: dissimilarity(original, random half-size sample), mean of {args.internal_runs} ==")
        for name, (_src, enc, ct) in built.items():
            if name in args.internal_skip:
                continue
            full = np.repeat(enc.db.rows, enc.db.weights, axis=0)
            vals = []
            for seed in range(args.internal_runs):
                sample = full[np.random.default_rng(seed).choice(len(full), len(full) // 2, replace=False)]
                tname = engine.temp_name("half")
                engine.register_arrow(tname, generated_arrow(enc, sample))
                es = its.encode(engine, Source(kind="table", table=tname), enc.columns)
                cs = its.mine(engine, es, 1, "all")
                cts = krimp(es.db, cs)
                vals.append(dissimilarity(enc, LabelledCodeTable.of(ct, enc), es, LabelledCodeTable.of(cts, es)))
                its.drop(engine, es)
                engine.execute(its.drop_table(tname, engine.dialect))
            print(f"{name:<8} {statistics.mean(vals):.3f}  (paper {internal[name]:.3f})", flush=True)

    print(f"\n== Laplace correction: exact E[NAS] | sampled NAS (mean of {args.runs}) | exact share of generated rows that copy an original row | ablation: E[NAS] with the correction on singletons only ==")
    for name, (src, enc, ct) in built.items():
        usage = np.asarray(ct.usage, dtype=np.float64)
        single = np.array([len(x) == 1 for x in ct.itemsets])
        for lap in args.laplace:
            model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(enc.columns), lap)
            ex = expected_anonymity(model, enc.db.rows, enc.db.weights, enc.n_rows)
            abl = GeneratorModel(list(ct.itemsets), usage + np.where(single, lap, 0.0), enc.item_column, len(enc.columns))
            ex_abl = expected_anonymity(abl, enc.db.rows, enc.db.weights, enc.n_rows)
            vals = []
            for seed in range(args.runs):
                tname = engine.temp_name("gen")
                engine.register_arrow(tname, generated_arrow(enc, generate(model, enc.n_rows, seed)))
                vals.append(anonymity_scores(engine, Source(kind="table", table=tname), src, enc.columns)["nas"])
                engine.execute(its.drop_table(tname, engine.dialect))
            print(f"{name:<8} laplace {lap:>7}: E[NAS] {ex['nas']:.3f}  NAS {statistics.mean(vals):.3f}  "
                  f"copies {ex['original_share']:.3f}  | singletons-only E[NAS] {ex_abl['nas']:.3f} (copies {ex_abl['original_share']:.3f})", flush=True)

if __name__ == "__main__":
    main()
