"""KRIMP generator on Adult (30,162 rows x 9 columns): time of each phase, NAS and dissimilarity.

    python bench/krimp_adult.py [--min-sup 30] [--laplace 0.001] [--seed 0] [--output /tmp/adult_gen.parquet]

Runs the same pipeline as ``sqlanon generate`` (sqlanon.generation.pipeline.run), with the scores
split into their own phases so each is timed. The whole run should take well under 5 minutes.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from sqlanon.engine import connect
from sqlanon.generation import itemsets as its
from sqlanon.generation.generator import GeneratorModel, generate
from sqlanon.generation.krimp import krimp
from sqlanon.generation.pipeline import generated_arrow, release_query, write_release
from sqlanon.generation.scores import LabelledCodeTable, anonymity_scores, dissimilarity, labelled, pattern_comparison
from sqlanon.release.write import Target
from sqlanon.engine.source import Source


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", default=os.path.join(os.environ.get("SQLANON_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")), "datasets", "adult", "adult.csv"))
    ap.add_argument("--min-sup", type=int, default=30)
    ap.add_argument("--laplace", type=float, default=0.001)
    ap.add_argument("--candidates", default="all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", default=None)
    args = ap.parse_args()
    out = args.output or os.path.join(tempfile.mkdtemp(prefix="sqlanon_adult_"), "adult_generated.parquet")
    t_all = time.perf_counter()
    times = {}

    def phase(name, fn):
        t = time.perf_counter()
        r = fn()
        times[name] = time.perf_counter() - t
        print(f"{name:<34}{times[name]:>8.2f} s", flush=True)
        return r

    engine = connect()
    src = Source.open(args.input, "csv", delimiter=";")
    cols = src.column_names(engine)
    enc = phase("frequency set (SQL GROUP BY)", lambda: its.encode(engine, src, cols))
    cands = phase(f"candidates ({args.candidates}, SQL per level)", lambda: its.mine(engine, enc, args.min_sup, args.candidates))
    ct = phase("KRIMP code table", lambda: krimp(enc.db, cands.items, cands.support))
    model = GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, len(cols), args.laplace)
    gen = phase(f"generate {enc.n_rows} rows", lambda: generate(model, enc.n_rows, args.seed))
    tname = engine.temp_name("gen")
    engine.register_arrow(tname, generated_arrow(enc, gen))
    gsrc = Source(kind="table", table=tname)
    anon = phase("NAS (SQL)", lambda: anonymity_scores(engine, gsrc, src, cols))
    enc_g = its.encode(engine, gsrc, cols)

    def patterns():
        o = labelled(enc, its.mine(engine, enc, args.min_sup, "all", min_length=1))
        g = labelled(enc_g, its.mine(engine, enc_g, args.min_sup, "all", min_length=1))
        return pattern_comparison(o, enc.n_rows, g, enc_g.n_rows)

    pat = phase("frequent pattern sets (SQL)", patterns)

    def dis():
        c = its.mine(engine, enc_g, args.min_sup, args.candidates)
        ct_g = krimp(enc_g.db, c.items, c.support)
        return dissimilarity(enc, LabelledCodeTable.of(ct, enc), enc_g, LabelledCodeTable.of(ct_g, enc_g)), ct_g

    ds, ct_g = phase("dissimilarity (KRIMP on output)", dis)
    written = phase("write Parquet + registry", lambda: write_release(
        engine, release_query(tname, cols, dict(src.columns(engine))), Target.from_options(output=out, overwrite=True), src,
        {"source": src.describe(), "search": "generate", "rows": enc.n_rows, "policy": {"min_sup": args.min_sup, "laplace": args.laplace, "seed": args.seed}}))
    total = time.perf_counter() - t_all
    print(f"{'total':<34}{total:>8.2f} s  ({'under' if total < 300 else 'OVER'} 5 minutes)")
    print()
    print(f"rows {enc.n_rows} ({len(enc.db.weights)} distinct), items {enc.db.n_items}, candidates {len(cands)} at min_sup {args.min_sup}")
    print(f"code table: {ct.non_singletons} non-singletons, L% {ct.compression_ratio:.2f} ({round(ct.total_bits)} of {round(ct.standard_bits)} bits); output's: {ct_g.non_singletons}")
    print(f"NAS {anon['nas']:.3f} (AS {anon['as']:.4f} of {anon['as_max']:.4f})")
    print(f"frequent itemsets at min_sup {args.min_sup}: {pat['pct_equal_itemsets']:.1f}% of {pat['original_itemsets']} found, "
          f"avg support diff {pat['avg_support_diff_pct']:.3f}% of rows, avg support of {pat['released_itemsets'] - round(pat['pct_equal_itemsets'] * pat['original_itemsets'] / 100)} new {pat['avg_support_new_pct']:.3f}%")
    print(f"dissimilarity {ds:.3f}")
    print(f"written: {written.get('output')} (release id {written.get('release_id')})")


if __name__ == "__main__":
    main()
