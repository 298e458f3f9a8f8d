"""KRIMP code tables and the generator on the UCI data of the data-generation paper (Table 1).

    python bench/krimp_uci.py [--runs 10] [--data /work/shared/datasets/uci-krimp]

Prints: (1) code tables vs the reference of the data's README (sizes, L%); (2) the generator
(Laplace 0.001, as many rows as the original, mean of --runs seeds): NAS, % equal frequent
itemsets, average support difference / support of new itemsets, dissimilarity, vs the paper's
Table 1 and the README's NAS ranges; (3) NAS of a table against itself; (4) the paper's "Orig.
internal" baseline: dissimilarity of the original and random half-size samples of it; (5) the
Laplace correction: per value, the exact expected NAS and share of generated rows that copy an
original row (``expected_anonymity``), the sampled mean NAS of --runs runs, and -- as an ablation,
not the paper's generator -- the exact NAS with the correction on singletons only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from sqlanon.engine import connect
from sqlanon.generate import itemsets as its
from sqlanon.generate.generator import GeneratorModel, expected_anonymity, generate
from sqlanon.generate.krimp import krimp
from sqlanon.generate.pipeline import generated_arrow
from sqlanon.generate.scores import (
    LabelledCodeTable,
    anonymity_scores,
    compare_tables,
    dissimilarity,
    labelled,
)
from sqlanon.source import Source

CODE_TABLES = [  # data, candidates, reference non-singletons, reference L%
    ("iris", "all", 13, 45.65),
    ("pima", "all", 58, 34.09),
    ("pima", "closed", 50, 34.30),
    ("led7", "all", 152, 28.53),
    ("nursery", "all", 260, 45.47),
]
PAPER = {  # NAS, % equal, avg sup diff, avg sup new, dissimilarity; README NAS range
    "iris": (0.72, 83, 1.69, 0.80, 0.158, (0.62, 0.80)),
    "led7": (0.66, 89, 0.14, 0.06, 0.171, (0.58, 0.72)),
    "nursery": (0.49, 90, 0.04, 0.03, 0.045, (0.43, 0.55)),
    "pima": (0.64, 60, 0.30, 0.14, 0.177, (0.55, 0.70)),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.environ.get("SQLANON_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")), "datasets", "uci-krimp"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--dissimilarity-runs", type=int, default=3, help="runs (per data set) that also run KRIMP on the output")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--internal-runs", type=int, default=3, help="half-size samples per data set for the internal baseline (0: skip)")
    ap.add_argument("--internal-skip", nargs="*", default=["nursery"], help="data sets without the internal baseline (KRIMP per sample)")
    ap.add_argument("--laplace", nargs="*", type=float, default=[0.001, 0.1, 1.0, 10.0, 100.0])
    args = ap.parse_args()
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
        ct = krimp(enc.db, c.items, c.support)
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
        orig_pat = labelled(enc, its.mine(engine, enc, 1, "all", min_length=1))
        res = []
        for seed in range(args.runs):
            gen = generate(model, enc.n_rows, seed)
            tname = engine.temp_name("gen")
            engine.register_arrow(tname, generated_arrow(enc, gen))
            want_ds = seed < args.dissimilarity_runs
            r = compare_tables(engine, Source(kind="table", table=tname), src, enc.columns, 1, "all", dissimilarity_measure=want_ds, original=(enc, ct), original_patterns=orig_pat)
            engine.execute(its.drop_table(tname, engine.dialect))
            res.append(r)
        mean = lambda k: statistics.mean(r[k] for r in res if k in r)
        p = PAPER[name]
        nas = mean("nas")
        verdict = "ok" if p[5][0] <= nas <= p[5][1] else "OFF"
        print(f"{name:<8} {nas:>6.3f} {p[5][0]:>5.2f}-{p[5][1]:<5.2f} {p[0]:>6.2f} {mean('pct_equal_itemsets'):>7.1f} {p[1]:>6} "
              f"{mean('avg_support_diff_pct'):>8.2f} {p[2]:>6.2f} {mean('avg_support_new_pct'):>7.2f} {p[3]:>6.2f} "
              f"{mean('dissimilarity'):>7.3f} {p[4]:>6.3f} {verdict}  (NAS sd {statistics.pstdev(r['nas'] for r in res):.3f})", flush=True)

    print("\n== NAS of a table against itself ==")
    for name, (src, enc, ct) in built.items():
        print(f"{name:<8} {anonymity_scores(engine, src, src, enc.columns)['nas']:.3f}")

    internal = {"iris": 0.047, "led7": 0.028, "nursery": 0.011, "pima": 0.110}  # paper, Table 1
    if args.internal_runs > 0:
        print(f"\n== internal baseline: dissimilarity(original, random half-size sample), mean of {args.internal_runs} ==")
        for name, (src, enc, ct) in built.items():
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
                cts = krimp(es.db, cs.items, cs.support)
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
