"""SafePub's mechanism over the lattice (Bild, Kuhn, Prasser, PoPETs 2018): the policy's checks,
the Bernoulli sample drawn by SQL, the exact scores, the exponential-mechanism search from the
most general transformation, and the run's preparation. The privacy parameters (beta, delta of
k, the derived k) are in :mod:`sqlanon.privacy.safepub`, whose names this module also offers.
"""

from __future__ import annotations

import random
from fractions import Fraction

from sqlglot import exp

from sqlanon.engine.source import Source
from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.expr.atoms import col, if_, lit, sum_, table_ref
from sqlanon.privacy import KAnonymity, exponential
from sqlanon.privacy.registry import asking_keys
from sqlanon.privacy.safepub import DEFAULT_SEARCH_SHARE, DEFAULT_STEPS, SCORES, Params, beta, delta_of, derive_k  # noqa: F401  (offered here too)
from sqlanon.search.lattice.spec import BUILT
from sqlanon.search.lattice.lattice import LatticeResult
from sqlanon.stats.core import count_rows


def validate(policy) -> None:
    if policy.epsilon is None:
        for key in ("delta", "epsilon_search", "safepub_steps", "seed"):
            if getattr(policy, key) is not None:
                raise ConfigError(f"{key} belongs to SafePub differential privacy: give --epsilon with it")
        return
    if policy.delta is None:
        raise ConfigError("SafePub differential privacy needs --delta with --epsilon")
    if not policy.epsilon > 0:
        raise ConfigError(f"epsilon must be > 0, got {policy.epsilon}")
    if not 0 < policy.delta < 1:
        raise ConfigError(f"delta must lie in (0, 1), got {policy.delta}")
    if policy.epsilon_search is not None and not 0 < policy.epsilon_search < policy.epsilon:
        raise ConfigError(f"epsilon_search must lie in (0, epsilon={policy.epsilon}), got {policy.epsilon_search}")
    if policy.safepub_steps is not None and policy.safepub_steps < 1:
        raise ConfigError(f"safepub_steps must be at least 1, got {policy.safepub_steps}")

    if policy.search not in BUILT:
        raise ConfigError(f"SafePub chooses a full-domain generalization over the lattice; search {policy.search} cannot be used with --epsilon")
    if policy.metric not in SCORES:
        raise ConfigError(f"SafePub scores transformations with {', '.join(SCORES)}; metric {policy.metric} has no score function")
    if policy.max_suppression not in (0.0, 1.0):
        raise ConfigError("SafePub suppresses every class smaller than its derived k (no budget): --max-suppression does not apply")
    for key in [*asking_keys(policy), *(["population"] if policy.population is not None else [])]:
        flag = "--" + key.replace("_", "-")
        raise ConfigError(f"SafePub differential privacy is not combined with other models here; {flag} cannot be honoured with --epsilon")
    for key, flag in (("local_recoding", "--local-recoding"), ("in_place", "--in-place"), ("weights", "--weights")):
        if getattr(policy, key):
            raise ConfigError(f"{flag} cannot be used with SafePub (--epsilon)")
    option = str(policy.search_options.get("safepub_output", "best"))
    if option not in ("best", "last"):
        raise ConfigError(f"safepub_output must be best or last, got {option!r}")


def sample_query(dialect, source_item: exp.Expr, columns: list[str], b: float, seed: int) -> exp.Select:
    """The rows of ``source_item`` kept by Bernoulli sampling at rate ``b``: a record is kept when
    the dialect's :meth:`~sqlanon.dialect.Dialect.unit_hash` of (the record, its copy number ``dup``
    among identical records, the seed) is below ``b``."""
    src = exp.alias_(source_item, "src", table=True, quoted=True)
    # ordered by the partition's own columns: every order numbers identical records 1..m alike,
    # and Spark refuses row_number() over an unordered window
    win = exp.Window(this=exp.RowNumber(), partition_by=[col(c, "src") for c in columns],
                     order=exp.Order(expressions=[exp.Ordered(this=col(c, "src")) for c in columns]))
    numbered = exp.select(*[col(c, "src") for c in columns], exp.alias_(win, "dup", quoted=True)).from_(src)
    u = dialect.unit_hash([col(c, "n") for c in columns] + [col("dup", "n"), lit(seed)])
    keep = exp.LT(this=u, expression=lit(b))
    return exp.select(*[col(c, "n") for c in columns]).from_(exp.alias_(exp.Subquery(this=numbered), "n", table=True, quoted=True)).where(keep)


def sample(session, params: Params) -> Source:
    """Create the sample as a temp table; the session's source becomes it."""
    engine = session.engine
    params.input_rows = count_rows(engine, session.source)
    name = engine.temp_name("safepub_sample")
    query = sample_query(engine.dialect, engine.source_from(session.source), session.source.column_names(engine), params.beta, params.seed)
    engine.execute(engine.dialect.create_temp(name, query))
    params.sample_rows = int(engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(table_ref(name))))
    return Source(kind="table", table=name, database=session.source.database)


# ------------------------------------------------------------------------------------------------
# scores and the search


def score_aggregates(stats, node) -> list[tuple[str, exp.Expr]]:
    """Released classes and the sum of their squared sizes, in integers (the scores are exact)."""
    okc = col("ok")
    sq = exp.Mul(this=col("cnt"), expression=col("cnt"))
    return [("sp_classes", sum_(if_(okc, lit(1), lit(0)))), ("sp_sq", sum_(if_(okc, sq, lit(0))))]


def _exact(value) -> Fraction:
    """An aggregate as an exact number: ints, Decimals (PostgreSQL's sum) and integral floats."""
    if value is None:
        return Fraction(0)
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"SafePub: a score aggregate came back inexact ({value!r})")
    return Fraction(value)


def score(metric: str, ns, node, heights: list[int], params: Params) -> Fraction:
    """The node's score, divided by its sensitivity (higher is better), as an exact fraction: the
    exponential mechanism (:mod:`sqlanon.privacy.exponential`) draws from it without rounding."""
    n = params.input_rows
    released = ns.rows - ns.suppressed
    suppressed = ns.suppressed + (params.input_rows - ns.rows)  # rows not sampled count as suppressed
    k = params.k
    if metric == "precision":
        d = len(node)
        total = sum((Fraction(released * lv, h) if h else Fraction(0)) + suppressed for lv, h in zip(node, heights))
        s = -total / d
        return s / (k - 1) if k > 1 else s
    if metric == "discernibility":
        pen = n * suppressed + _exact(ns.extra.get("sp_sq"))
        sens = n * (Fraction(5) if k == 1 else Fraction(k * k, k - 1) + 1)
        return -pen / sens
    if metric == "aecs":
        return _exact(ns.extra.get("sp_classes")) + (1 if suppressed > 0 else 0)
    raise ConfigError(f"no SafePub score for metric {metric!r}")


def exponential_draw(rng, candidates: list[int], scores: dict[int, Fraction], epsilon: float) -> int:
    """One candidate, ``P(x) ~ exp(epsilon/2 * score(x))``, drawn exactly (see :mod:`sqlanon.privacy.exponential`)."""
    return candidates[exponential.draw(rng, [scores[c] for c in candidates], epsilon)]


def run(lattice, params: Params, metric_name: str, say=lambda m: None):
    """The SafePub search over the (bounded) lattice; returns a LatticeResult-like object."""
    stats = lattice.stats
    heights = [h.max_level for h in stats.hierarchies]
    rng = random.Random(params.seed) if params.seeded else random.SystemRandom()
    scores: dict[int, Fraction] = {}
    ns_of: dict[int, object] = {}

    def evaluate(idxs: list[int]) -> None:
        todo = [i for i in idxs if i not in scores]
        if not todo:
            return
        nodes = [lattice.node(i) for i in todo]
        results = stats.evaluate_many(nodes, lattice.ok, lambda n: score_aggregates(stats, n))
        for i, node, ns in zip(todo, nodes, results):
            ns_of[i] = ns
            scores[i] = score(metric_name, ns, node, heights, params)

    pivot = lattice.top
    evaluate([pivot])
    best, best_score = pivot, scores[pivot]
    candidates: dict[int, None] = {pivot: None}
    trace = []
    eps_step = params.epsilon_search / params.steps
    for step in range(1, params.steps + 1):
        preds = predecessors(lattice, pivot)
        evaluate([p for p in preds if p not in scores])
        for p in preds:
            candidates.setdefault(p, None)
        candidates.pop(pivot, None)
        if not candidates:
            break
        pivot = exponential_draw(rng, list(candidates), scores, eps_step)
        trace.append({"step": step, "pivot": lattice.node(pivot)})
        if scores[pivot] > best_score:
            best, best_score = pivot, scores[pivot]
    chosen = pivot if params.output == "last" else best
    lattice.check(chosen)  # once more with the metric's own aggregates (every class < k suppressed)
    ns, _, value = lattice.evaluated[chosen]
    say(f"safepub: {len(scores)} transformations scored in {len(trace)} steps; chosen {lattice.node(chosen)} (score {float(scores[chosen]):.6g})")
    result = LatticeResult(lattice.node(chosen), ns, value, len(scores), len(lattice), [])
    result.extra["safepub"] = {"score": float(scores[chosen]), "steps_run": len(trace), "scored": len(scores)}
    return result


def predecessors(lattice, idx: int) -> list[int]:
    node = lattice.nodes[idx]
    return [idx - int(lattice.strides[i]) for i in range(len(lattice.maxes)) if node[i] > lattice.mins[i]]


def prepare(policy, session, requirement) -> Params:
    """Validate, derive k and beta, draw the sample (the session's source becomes it), and make
    the requirement k-anonymity with k and no budget. The seed is dropped from the policy so
    that no report or registry entry records it."""
    validate(policy)
    params = Params(policy)
    policy.seed = None
    session.source = sample(session, params)
    if params.sample_rows == 0:
        raise UnsatisfiableError(f"SafePub: the random sample (beta={params.beta:.4g}) of {params.input_rows} rows is empty; nothing can be released")
    policy.k = params.k
    policy.max_suppression = 1.0
    requirement.models = [KAnonymity(params.k)]
    requirement.max_suppression = 1.0
    say = session.progress
    say(f"safepub: epsilon_anon={params.epsilon_anon:.4g}, beta={params.beta:.4g}, k={params.k}; sampled {params.sample_rows:,} of {params.input_rows:,} rows")
    return params
