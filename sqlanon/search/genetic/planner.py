"""Genetic search over flexible generalizations (Iyengar, KDD 2002).

A solution is one flexible cut per quasi-identifier (:mod:`sqlanon.search.genetic.cut`): a valid cut of the
taxonomy tree for a categorical QI, disjoint intervals over potential end points for a numeric QI.
Rows left in classes failing the privacy requirement (smaller than k) are suppressed, all QIs
masked, and counted by the metric. The requirement may combine k-anonymity, distinct, entropy and recursive
(c,l)-diversity, t-closeness (equal, ordered and hierarchical distance), k-map (population table
or estimated) and delta-presence: each class's aggregates come from the batch statement
(:mod:`sqlanon.search.genetic.stats`). The search is GENITOR (Whitley 1989), steady state:

* the population is kept ranked (feasible solutions first, by metric; then by suppressed rows);
* each iteration picks two parents by **rank-based selection** (linear bias, default 1.5), makes
  two children by **two-point crossover** of the bit strings, **mutates** every bit with
  probability ``mutation_rate``, **repairs** invalid categorical parts into the nearest valid cut,
  and each child that is new to the population and better than the worst member **replaces the
  worst**.

Fitness comes from the frequency set by SQL (:mod:`sqlanon.search.genetic.objective`,
:mod:`sqlanon.search.genetic.stats`), or in-process over the fetched frequency set when it is small
and the requirement is a class-size threshold (:mod:`sqlanon.search.genetic.local`): the children of ``batch`` consecutive iterations are scored by one
statement, then inserted one by one in order (``batch=1`` is textbook GENITOR; a batch much smaller
than the population changes nothing measurable and is several times faster: docs/measurements.md). Results are memoized per
solution and the per-attribute parts per attribute cut.

Options (``ctx.options``; CLI flags or ``--option KEY=VALUE``):

``iterations`` (2000), ``population`` (100), ``seed`` (None = random), ``mutation_rate`` (0.002,
per bit), ``batch`` (16), ``selection_bias`` (1.5), ``crossover`` (``two-point`` | ``uniform``),
``time_limit`` (seconds, none), ``numeric`` (list of QIs cut into intervals), ``max_endpoints``
(128: more distinct values are quantized to this many equal-frequency end points),
``seed_lattice`` (true: start from the full-domain lattice optimum under LM when cheap,
:mod:`sqlanon.search.genetic.seeding`),
``ctx.bounds`` (``--min-level``/``--max-level``): every cut node of a QI lies between its levels
(:meth:`sqlanon.search.genetic.cut.TreeCoder.set_bounds`): the initial population, mutation and crossover all go
through the bounded repair, so no member ever leaves the bounds; a bounded ``bands`` QI is cut along
its tree, a QI without levels (intervals) refuses the bound. ``ctx.weights`` (``--weights``)
multiply each QI's per-row LM loss in the objective's LM part (:mod:`sqlanon.search.genetic.objective`);
an objective without an LM part refuses them.

``prune_unused`` (true: leaves holding no row get no chromosome bit), ``local_rows`` (the
Statistics' cap, 250,000: a frequency set of at most this many rows is fetched once and the
candidates of a class-size requirement are scored in-process, :mod:`sqlanon.search.genetic.local`;
0: every batch by SQL), ``objective`` (lm | cm |
cm-cost | regression | weighted; default the ``--metric``), and the metric options of
:func:`sqlanon.search.genetic.objective.build_objective` (``cost_matrix``, ``cost_suppressed``,
``regression_target``, ``dispersion``, ``weights``).
"""

from __future__ import annotations

import bisect
import math

from typing import Any

import numpy as np

from sqlanon.search.genetic.cut import Layout, chromosome_key, recoding_from_transformation
from sqlanon.errors import ConfigError
from sqlanon.search.genetic.objective import SHARE_METRICS, FlexibleEvaluator, build_objective
from sqlanon.plan import Plan
from sqlanon.search.context import SearchContext
from sqlanon.search.limits import Limits
from sqlanon.search.genetic.seeding import lattice_seed, level_parts, seed_metric
from sqlanon.search.genetic.local import LOCAL_ROWS
from sqlanon.search.genetic.spec import AUTO_ITERATIONS, auto_runs
from sqlanon.search.lightning.planner import DEFAULT_TIME_LIMIT
from sqlanon.privacy.diagnosis import unsatisfiable

__all__ = ["run", "recoding_from_transformation", "layout_for", "GA"]

#: once every member is feasible, score the LM of feasible children only
#: (:attr:`sqlanon.search.genetic.objective.FlexibleEvaluator.lm_within`); False: every child's
#: (``bench/wide.py``'s ``old`` path)
LM_WITHIN = True

DEFAULTS: dict[str, Any] = {  # the options of a genetic search, of several types
    "iterations": 2000,
    "population": 100,
    "seed": None,
    "mutation_rate": 0.002,
    "batch": 16,
    "selection_bias": 1.5,
    "crossover": "two-point",
    "time_limit": None,
    "step_limit": None,
    "max_endpoints": 128,
    "prune_unused": True,
    "seed_lattice": True,
    "local_rows": LOCAL_ROWS,
    "level_mutation": 0.0,
}


def genetic_options(ctx) -> dict:
    """The genetic search's options of a run, the one place they are read from the context
    (``ctx.options``). Under ``--search auto`` (:func:`auto_runs`) they are auto's
    (:class:`sqlanon.search.registry.AutoOptions`) translated: its limits bound lightning and the
    genetic search together (without one, lightning's default limit,
    :data:`sqlanon.search.lightning.planner.DEFAULT_TIME_LIMIT`), ``genetic_seed`` is the
    genetic search's random seed, ``batch`` lightning's nodes per statement (``lightning_batch``),
    and the genetic search runs until its limit (:data:`AUTO_ITERATIONS`)."""
    options = dict(ctx.options)
    if not auto_runs(ctx):
        return options
    time_limit, step_limit = options.get("time_limit"), options.get("step_limit")
    if time_limit is None and step_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
    out = {"time_limit": time_limit, "step_limit": step_limit, "iterations": AUTO_ITERATIONS,
           "seed": options.get("genetic_seed", 1), "lightning_batch": options.get("batch")}
    if options.get("local_rows") is not None:
        out["local_rows"] = options["local_rows"]
    return out


def _bool(v) -> bool:
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def parse_options(options: dict) -> dict:
    out = dict(DEFAULTS)
    out.update({k: v for k, v in options.items() if v is not None or k == "seed"})
    try:
        for key in ("iterations", "population", "batch", "max_endpoints"):
            out[key] = int(out[key])
        for key in ("mutation_rate", "selection_bias", "level_mutation"):
            out[key] = float(out[key])
        out["seed"] = None if out.get("seed") in (None, "") else int(out["seed"])
        out["time_limit"] = None if out.get("time_limit") in (None, "") else float(out["time_limit"])
        out["step_limit"] = None if out.get("step_limit") in (None, "") else int(out["step_limit"])
        out["local_rows"] = LOCAL_ROWS if out.get("local_rows") in (None, "") else int(out["local_rows"])
    except (TypeError, ValueError) as err:
        raise ConfigError(f"bad genetic search option: {err}") from None
    out["prune_unused"] = _bool(out["prune_unused"])
    out["seed_lattice"] = _bool(out["seed_lattice"])
    numeric = out.get("numeric") or []
    out["numeric"] = [numeric] if isinstance(numeric, str) else list(numeric)
    if out["population"] < 2:
        raise ConfigError("population must be at least 2")
    if out["iterations"] < 0:
        raise ConfigError("iterations must be >= 0")
    if not 0.0 <= out["mutation_rate"] <= 1.0:
        raise ConfigError(f"mutation_rate must be in [0, 1], got {out['mutation_rate']}")
    if not 0.0 <= out["level_mutation"] <= 1.0:
        raise ConfigError(f"level_mutation must be in [0, 1], got {out['level_mutation']}")
    if not 1.0 <= out["selection_bias"] <= 2.0:
        raise ConfigError(f"selection_bias must be in [1, 2], got {out['selection_bias']}")
    if out["batch"] < 1:
        raise ConfigError("batch must be >= 1")
    if out["crossover"] not in ("two-point", "uniform"):
        raise ConfigError(f"crossover must be two-point or uniform, got {out['crossover']!r}")
    return out


def layout_for(qis, hierarchies, column_freqs, options: dict | None = None) -> Layout:
    """The chromosome layout the search uses for these QIs (also for reading a plan back)."""
    opts = parse_options(options or {})
    return Layout.build(qis, hierarchies, column_freqs, numeric=opts["numeric"], prune_unused=opts["prune_unused"],
                        max_endpoints=opts["max_endpoints"])


class GA:
    """GENITOR over chromosomes of a :class:`Layout`, scored by a :class:`FlexibleEvaluator`."""

    def __init__(self, layout: Layout, evaluator: FlexibleEvaluator, opts: dict, progress=None, trace=None, limits: Limits | None = None) -> None:
        self.layout = layout
        #: the time limit's clock (started by :func:`run` before the search's own frequency set)
        self.limits = limits if limits is not None else Limits(opts["time_limit"], opts.get("step_limit"))
        self.ev = evaluator
        self.opts = opts
        self.rng = np.random.default_rng(opts["seed"])
        self.progress = progress or (lambda m: None)
        self.trace = trace or (lambda s: None)
        self.pop: list[tuple[tuple, tuple]] = []  # (rank key, chromosome), best first
        self.members: set[tuple] = set()
        #: the members' results (the evaluator's memo is capped and may drop them)
        self.aggs: dict[tuple, dict] = {}
        #: the members' bit arrays (:meth:`bits_of`), dropped with the member
        self.arrays: dict[tuple, np.ndarray] = {}
        self.history: list[dict] = []
        self.iterations_done = 0
        self.children = 0
        self.inserted = 0
        self.unique: set[bytes] = set()
        self.seeds: list[tuple] = []  # chromosomes to start from (e.g. the lattice optimum)
        #: per QI its full-domain levels' parts (:func:`sqlanon.search.genetic.seeding.level_parts`),
        #: for the level mutation (``level_mutation``)
        self.level_parts: list[list[tuple]] = []
        self.seed_seconds = 0.0  # the seed's search time (set by run)

    @staticmethod
    def rank_key(agg: dict) -> tuple:
        if agg["feasible"]:
            return (0, agg["value"], agg["suppressed"])
        return (1, agg["suppressed"], agg["value"])

    def repair(self, bits: np.ndarray) -> tuple:
        return self.layout.repair(bits.tolist())

    def initial(self) -> list[tuple]:
        """Random chromosomes of varied density (repaired), plus the all-general solution."""
        n, size = self.layout.nbits, self.opts["population"]
        # the most general cut (the root, or within level bounds the max-level cut)
        out = list(dict.fromkeys([tuple(self.layout.repair([0] * n)), *self.seeds]))
        seen = set(out)
        tries = 0
        while len(out) < size and tries < 20 * size:
            tries += 1
            density = self.rng.random() ** 2  # more mass on general solutions: they tend to be feasible
            ch = self.repair(self.rng.random(n) < density)
            if ch not in seen:
                seen.add(ch)
                out.append(ch)
        return out

    def select(self) -> int:
        """Linear rank-based selection (Whitley's formula); 0 is the best."""
        p, b = len(self.pop), self.opts["selection_bias"]
        r = self.rng.random()
        if b <= 1.0 + 1e-9:
            return int(r * p)
        idx = p * (b - math.sqrt(b * b - 4.0 * (b - 1.0) * r)) / 2.0 / (b - 1.0)
        return min(int(idx), p - 1)

    def breed(self) -> list[tuple]:
        n = self.layout.nbits
        i = self.select()
        j = self.select()
        tries = 0
        while j == i and tries < 10 and len(self.pop) > 1:
            j = self.select()
            tries += 1
        a = self.bits_of(self.pop[i][1])
        b = self.bits_of(self.pop[j][1])
        if n == 0:
            return [tuple(a)]
        if self.opts["crossover"] == "uniform":
            mask = self.rng.random(n) < 0.5
        else:
            x, y = sorted(self.rng.integers(0, n + 1, size=2))
            mask = np.zeros(n, dtype=bool)
            mask[x:y] = True
        c1 = np.where(mask, b, a)
        c2 = np.where(mask, a, b)
        out = []
        for c in (c1, c2):
            flips = self.rng.random(n) < self.opts["mutation_rate"]
            c = np.where(flips, 1 - c, c)
            # repair keeps the mutated bits when a valid cut can (else a split mutation is undone)
            out.append(self.level_mutate(self.layout.repair(c.tolist(), np.flatnonzero(flips).tolist())))
        return out

    def level_mutate(self, child: tuple) -> tuple:
        """With probability ``level_mutation``, one QI of ``child``, drawn at random, set to one of
        its full-domain levels, drawn at random (ARX's GA mutation, on the lattice's moves: the
        search can jump between the lattice's nodes and their flexible neighbourhoods). No draw
        at all when the option is 0 (the textbook GENITOR's random sequence)."""
        rate = self.opts["level_mutation"]
        if rate <= 0 or not self.level_parts or self.rng.random() >= rate:
            return child
        i = int(self.rng.integers(len(self.level_parts)))
        parts = self.level_parts[i]
        if not parts:
            return child
        a, b = self.layout.offsets[i]
        return child[:a] + parts[int(self.rng.integers(len(parts)))] + child[b:]

    def bits_of(self, ch: tuple) -> np.ndarray:
        """A member's chromosome as a bit array (uint8), made once per member: a parent is drawn
        many times, and a tuple of a thousand ints costs more to read into an array than the
        crossover that uses it."""
        bits = self.arrays.get(ch)
        if bits is None:
            bits = self.arrays[ch] = np.array(ch, dtype=np.uint8)
        return bits

    def insert(self, ch: tuple, agg: dict) -> bool:
        if ch in self.members:
            return False
        key = self.rank_key(agg)
        if len(self.pop) >= self.opts["population"]:
            if key >= self.pop[-1][0]:
                return False
            _, worst = self.pop.pop()
            self.members.discard(worst)
            self.aggs.pop(worst, None)
            self.arrays.pop(worst, None)
        bisect.insort(self.pop, (key, ch))
        self.members.add(ch)
        self.aggs[ch] = agg
        return True

    def note_best(self, started: float) -> None:
        key, ch = self.pop[0]
        agg = self.aggs[ch]
        if self.history and self.history[-1]["value"] == agg["value"] and self.history[-1]["feasible"] == agg["feasible"]:
            return
        step = {
            "iteration": self.iterations_done,
            "evaluations": self.ev.evaluations,
            "unique": len(self.unique),
            "seconds": round(self.limits.elapsed(), 3),
            "value": agg["value"],
            "feasible": agg["feasible"],
            "suppressed": agg["suppressed"],
            **{name: v for name, v in agg["report"].items()},
        }
        self.history.append(step)
        self.trace({"step": "best", **step})

    def lm_bound(self) -> int:
        """The most rows a child may suppress and still need its LM, with the population full: a
        feasible child (at most the budget) and an infeasible one that could be inserted (it ranks
        by suppressed rows first, so at most the worst member's, itself infeasible); any other
        child is never inserted, so its value is never read. The bound only falls (members are
        replaced by better ones only), so a child once scored without its LM never needs it."""
        worst = self.pop[-1][0]
        return int(self.ev.budget) if worst[0] == 0 else max(int(self.ev.budget), int(worst[1]))

    def score(self, chromosomes: list[tuple]) -> list[dict]:
        """Score by one statement, timed for the time limit (memo hits cost nothing); each
        chromosome's key (:func:`chromosome_key`, packed bits) is made once, for the memo and
        the unique solutions."""
        before = self.ev.evaluations
        t0 = self.limits.now()
        keys = [chromosome_key(ch) for ch in chromosomes]
        out = self.ev.score(chromosomes, keys=keys)
        self.unique.update(keys)
        # evaluations (memo hits are free) count against the step limit
        self.limits.record(self.ev.evaluations - before, self.limits.now() - t0)
        return out

    def populate(self) -> None:
        """Score the first population, 64 per statement, each statement sized to the time left;
        the most general solution and the seeds are scored whatever the time (an answer is needed)."""
        init = self.initial()
        done = 0
        while done < len(init):
            room = self.limits.room(min(64, len(init) - done))
            if room == 0 and done:
                break
            if done == 0:  # the most general solution and the seeds, whatever the limits
                room = max(room, 1 + len(self.seeds))
            chunk = init[done : done + room]
            for ch, agg in zip(chunk, self.score(chunk)):
                self.insert(ch, agg)
            done += len(chunk)

    def run(self) -> tuple:
        opts, limits = self.opts, self.limits
        self.populate()
        self.note_best(limits.started)
        total = opts["iterations"]
        every = max(total // 50, 1)
        last_say = limits.elapsed()
        while self.iterations_done < total and not limits.stopped_by:
            # two children per iteration: as many iterations as the time left holds
            steps = limits.room(2 * min(opts["batch"], total - self.iterations_done)) // 2
            if steps == 0:  # not even one iteration's two children fit
                steps_left = None if limits.step_limit is None else limits.step_limit - limits.steps
                limits.stopped_by = limits.stopped_by or ("step_limit" if steps_left is not None and steps_left < 2 else "time_limit")
                break
            if LM_WITHIN and len(self.pop) >= opts["population"]:
                self.ev.lm_within = self.lm_bound()
            kids: list[tuple] = []
            for _ in range(steps):
                kids.extend(self.breed())
            aggs = self.score(kids)
            for ch, agg in zip(kids, aggs):
                self.children += 1
                self.inserted += self.insert(ch, agg)
            before = self.iterations_done
            self.iterations_done += steps
            self.note_best(limits.started)
            elapsed = limits.elapsed()
            if self.iterations_done // every != before // every or elapsed - last_say > 5.0:
                last_say = elapsed
                best = self.aggs[self.pop[0][1]]
                rate = self.ev.evaluations / max(elapsed, 1e-9)
                bar = "#" * int(30 * self.iterations_done / max(total, 1))
                self.progress(
                    f"genetic [{bar:<30}] {self.iterations_done}/{total} best {best['value']:.4f}"
                    f"{'' if best['feasible'] else ' (infeasible)'} evals {self.ev.evaluations} ({rate:.0f}/s)"
                )
        if limits.stopped_by is None:
            limits.stopped_by = "iterations"
        self.seconds = limits.elapsed()
        self.progress(f"genetic: stopped by {limits.stopped_by} after {self.iterations_done} iterations, "
                      f"{self.ev.evaluations} evaluations in {self.seconds:.1f} s")
        return self.pop[0][1]


def objective_name(ctx, options: dict) -> str:
    name = options.get("objective")
    if not name:
        name = ctx.metric.name if ctx.metric is not None else "lm"
        if name not in ("lm", "cm", *SHARE_METRICS):
            raise ConfigError(f"the genetic search optimizes {', '.join(('lm', 'cm', *SHARE_METRICS))} (or --option objective=cm-cost|regression|weighted), "
                              f"not {name!r} (a flexible cut has no levels, and its classes' sizes are not summed)")
    return str(name)


def same_value(a: float, b: float) -> bool:
    """Whether two metric values are the same but for rounding (relative 1e-9).

    >>> same_value(0.18917378917378916, 0.18917378917378910), same_value(0.1891, 0.1892)
    (True, False)
    """
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def seed_plan(ctx, layout, name: str, agg: dict, ga, ev) -> Plan | None:
    """The seed's full-domain plan when it beats or ties the genetic search's best solution (or that one
    does not release): a flexible cut cannot always release the seed's partition (a numeric QI's
    bands whose edges are no potential end points, ``max_endpoints``), so the population's best
    can be worse than the seed it started from. Compared only where both values have one
    definition: a share metric (:data:`SHARE_METRICS`), or LM with every QI cut along its tree
    (an interval's LM is not its band's). None otherwise: the genetic search's answer stands."""
    result = ctx.genetic_seed_result
    if result is None or not (name in SHARE_METRICS or not any(c.numeric for c in layout.coders)):
        return None
    tie = agg["feasible"] and same_value(float(agg["value"]), float(result.value))
    if agg["feasible"] and not tie and float(agg["value"]) < float(result.value):
        return None
    # a tie is the seed's: the genetic search found nothing better, and a full-domain node is the
    # simpler release (levels, not value lists). Within a rounding error: the two values are sums
    # taken in different orders (in-process or in SQL), so their last bits differ from run to run
    info = ctx.genetic_seed
    ctx.progress(f"genetic: {info['search']}'s seed node ({name} {result.value:.4f}) is "
                 + ("as good as" if tie else "better than")
                 + " the best cut found" + (f" ({float(agg['value']):.4f})" if agg["feasible"] else " (which does not release)") + "; it is the answer")
    seconds = ga.seconds
    extra = {
        "answer_from": info["search"], "seed_node": info, "genetic_value": float(agg["value"]) if agg["feasible"] else None,
        "evaluations": ev.evaluations, "seed_seconds": round(ga.seed_seconds, 3),
        "evaluations_per_second": round(ev.evaluations / (seconds - ga.seed_seconds), 1) if seconds > ga.seed_seconds else None,
        "iterations": ga.iterations_done, "search_seconds": round(seconds, 3), "stopped_by": ga.limits.stopped_by,
        # the genetic search that ran, as its own answer reports it
        "local_evaluations": ev.gstats.local_evaluations, "unique_solutions": len(ga.unique),
        "population": ga.opts["population"], "mutation_rate": ga.opts["mutation_rate"], "seed": ga.opts["seed"],
        "time_limit": ga.opts["time_limit"],
    }
    search = "genetic"
    if auto_runs(ctx):
        search = info["search"]
        extra["search_auto"] = auto_report(ctx, info["search"], ga, ev, extra["genetic_value"])
    return Plan.from_lattice_result(search, ctx.stats, ctx.requirement, seed_metric(ctx, name), result, ctx.bounds, **extra)


def auto_report(ctx, answer_from: str, ga, ev, genetic_value: float | None) -> dict:
    """``search_auto`` of ``--search auto`` on a wide table: what it chose (the search whose
    answer is released), the runs (lightning's seed, then the genetic search) with their values,
    work and seconds, and which produced the answer."""
    seed = ctx.genetic_seed or {}
    runs = []
    if seed:
        runs.append({"search": seed["search"], "value": seed["value"], "nodes_evaluated": seed["nodes_evaluated"], "seconds": round(ga.seed_seconds, 3),
                     "stopped_by": seed.get("stopped_by")})
    runs.append({"search": "genetic", "value": genetic_value, "evaluations": ev.evaluations, "iterations": ga.iterations_done,
                 "seconds": round(ga.seconds - ga.seed_seconds, 3), "stopped_by": ga.limits.stopped_by})
    return {**(ctx.chosen.get("search_auto") or {}), "chose": answer_from, "runs": runs, "answer_from": answer_from}


def preflight(policy, levels) -> None:
    """The refusals that need no data: the objective and its options."""
    options = policy.search_options
    build_objective(str(options.get("objective") or policy.metric or "lm"), parse_options(options), policy.class_column)


def run(ctx: SearchContext) -> Plan:
    options = genetic_options(ctx)
    opts = parse_options(options)
    # the search's own setup counts: gbase, the seed, the first population
    limits = Limits(opts["time_limit"], opts["step_limit"])
    req = ctx.requirement
    stats = ctx.stats
    bounds = ctx.bounds
    weights = ctx.weights
    # the lattice seed's in-process cap: the run's (a lightning seed over a set above the genetic
    # cap still goes in-process, as lightning alone would)
    seed_cap = stats.local_rows
    if options.get("local_rows") is not None:
        stats.local_rows = seed_cap = opts["local_rows"]  # the frequency set's in-process cap (0: SQL only), the seed's too
    else:
        stats.local_rows = min(int(stats.local_rows), LOCAL_ROWS)  # candidates group the whole set: the lower cap
    layout = Layout.build(ctx.qis, ctx.hierarchies, stats.column_freqs, numeric=opts["numeric"],
                          prune_unused=opts["prune_unused"], max_endpoints=opts["max_endpoints"],
                          bounds=bounds, bounded=ctx.bounded)
    name = objective_name(ctx, options)
    objective, cost_specs = build_objective(name, opts, stats.class_column or options.get("class_column"), lattice_metric=ctx.metric)
    if weights is not None and not objective.metric.needs_lm:
        raise ConfigError(
            f"--weights multiply each quasi-identifier's LM loss; the genetic objective {name} has no LM part "
            "(use --metric lm, or --option objective=weighted with an lm term)"
        )
    ev = FlexibleEvaluator(stats, layout, objective, req, cost_specs, req.needs, weights=weights)
    limits.run(0, ev.prepare)
    ctx.progress(f"genetic: chromosome of {layout.nbits} bits over {len(ctx.qis)} QIs; population {opts['population']}, "
                 f"{opts['iterations']} iterations, objective {name}")
    try:
        ga = GA(layout, ev, opts, ctx.progress, ctx.trace, limits)
        seed_started = limits.now()
        ga.level_parts = level_parts(layout, ctx.hierarchies, bounds)
        if opts.get("seed_lattice", True):
            genetic_cap, stats.local_rows = stats.local_rows, seed_cap
            try:
                ga.seeds = lattice_seed(ctx, layout, name, limits, opts.get("lightning_batch"))
            finally:
                stats.local_rows = genetic_cap
        #: the seed's search time (lightning's share of the limit): not the genetic search's own
        ga.seed_seconds = limits.now() - seed_started
        best = ga.run()
        agg = ev.score([best], per_column=True)[0]
    finally:
        ev.drop()
    seed = seed_plan(ctx, layout, name, agg, ga, ev)
    if seed is not None:
        return seed
    if not agg["feasible"]:
        # names the model(s) that fail and what the closest solution (the best ranked) leaves
        raise unsatisfiable(stats, req, layout.recoding(best), qis=ctx.qis, scope="(genetic search, best solution found)",
                            label="the genetic search's best solution")
    recoding = layout.recoding(best)
    transformation = layout.transformation(best)
    seconds = ga.seconds
    extra = {
        "lm": agg["report"].get("lm"),
        "lm_per_column": dict(zip(ctx.qis, agg.get("lm_per_column", []))),
        "evaluations": ev.evaluations,
        "local_evaluations": ev.gstats.local_evaluations,
        "local_reason": ev.gstats.local_reason,
        # the genetic search's own evaluations over its own time (the seed's search left out)
        "evaluations_per_second": round(ev.evaluations / (seconds - ga.seed_seconds), 1) if seconds > ga.seed_seconds else None,
        "seed_seconds": round(ga.seed_seconds, 3),
        "iterations": ga.iterations_done,
        "unique_solutions": len(ga.unique),
        # the per-attribute parts' bytes at the end (bounded: objective.PART_CACHE_BYTES)
        "part_cache_bytes": ev.cache_bytes(),
        "population": opts["population"],
        "mutation_rate": opts["mutation_rate"],
        "seed": opts["seed"],
        "chromosome_bits": layout.nbits,
        "chromosome": "".join(map(str, best)),
        "objective": name,
        "objective_value": agg["value"],
        "numeric": [q for q, c in zip(ctx.qis, layout.coders) if c.numeric],
        "search_seconds": round(seconds, 3),
        "stopped_by": limits.stopped_by,
        "time_limit": opts["time_limit"],
        "best_so_far": ga.history,
        # the full-domain node the population started from (seeding), and which search found
        # the returned solution: the seed's when the genetic search found nothing better
        "seed_node": ctx.genetic_seed,
        "answer_from": "genetic" if not ga.seeds or tuple(best) not in set(ga.seeds) else (ctx.genetic_seed or {}).get("search", "genetic"),
    }
    if auto_runs(ctx):
        extra["search_auto"] = auto_report(ctx, "genetic", ga, ev, float(agg["value"]))
    if weights is not None:
        extra["weights"] = dict(zip(ctx.qis, weights))
    if bounds is not None:
        extra["level_bounds"] = {q: list(b) for q, b in zip(ctx.qis, bounds)}
    if "cm" in agg["report"]:
        extra["cm"] = agg["report"]["cm"]
    return Plan(
        search="genetic",
        qis=list(ctx.qis),
        recoding=recoding,
        transformation=transformation,
        requirement=req,
        rows=stats.rows,
        suppressed_rows=int(agg["suppressed"]),
        metric_name=name,
        metric_value=float(agg["value"]),
        nodes_evaluated=ev.evaluations,
        extra=extra,
    )
