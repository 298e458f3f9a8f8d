"""Iyengar's usage metrics for *flexible* generalizations (valid cuts, numeric intervals).

All of them are computed from frequency sets by SQL (:mod:`sqlanon.search.genetic.stats`), a batch of
candidate solutions per statement; what depends on one attribute's cut only is cached per
attribute (:class:`FlexibleEvaluator`).

* **LM** (general loss): per row and QI, categorical ``(M_P - 1)/(M - 1)`` (``M_P`` leaves below
  the released node, ``M`` leaves of the tree), numeric ``(U_i - L_i)/(U - L)`` (the released
  interval's smallest and largest value over the column's bounds); a suppressed row counts 1 in
  every QI. Per column the mean over rows; LM is the mean over columns. With attribute weights
  (``--weights``, normalized to the largest), QI ``i``'s per-row loss -- released or suppressed --
  is multiplied by ``w_i`` before the means: ``LM = sum_i w_i LM_i / n`` (ARX's weighted LM, as
  the lattice metric); ``lm_per_column`` then holds ``w_i LM_i``. Only the LM part of an objective
  is weighted (CM, cost-matrix CM and regression score classes, not attributes).
* **CM** (classification): ``(suppressed rows + released rows not of their group's majority
  class) / N``.
* **cost-matrix CM**: a row of class ``a`` in a group whose majority class is ``b`` costs
  ``cost[a][b]``; suppressed rows either form one more group (the paper's suggestion, default) or
  cost a fixed penalty each; over ``N``.
* **regression**: the dispersion of a numeric target within groups (variance: sum of squared
  deviations from the group mean; ``mad``: sum of absolute deviations from the group median),
  suppressed rows forming one more group, normalized by the dispersion of the single group of all
  rows.
* **weighted**: ``sum(w_t * metric_t)`` over several targets.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

from sqlanon.errors import ConfigError
from sqlanon.search.genetic.cut import chromosome_key
from sqlanon.search.genetic.stats import ClassTarget, GeneticStats, RegressionTarget
from sqlanon.files.strict_load import load_json_spec
from sqlanon.metrics import METRICS
from sqlanon.metrics.loss import Granularity, arx_share


# ---------------------------------------------------------------------------------------------
# metrics: pure formulas over one candidate's aggregates


class FlexMetric:
    name = "metric"
    needs_lm = False
    #: what the evaluator's per-leaf lists hold: LM losses (:class:`FlexShare`: shares)
    unit = "lm"

    def value(self, agg: dict, ev: FlexibleEvaluator) -> float:  # pragma: no cover - interface
        raise NotImplementedError


class FlexLM(FlexMetric):
    name = "lm"
    needs_lm = True

    def value(self, agg, ev):
        n, N = ev.n, ev.rows
        if n == 0 or N == 0:
            return 0.0
        total = sum(agg["colsum"]) - float(agg["lm_sup"] or 0.0) + ev.weight_sum * agg["suppressed"]
        return total / (n * N)


class FlexCM(FlexMetric):
    name = "cm"

    def __init__(self, target: int = 0) -> None:
        self.t = target

    def value(self, agg, ev):
        return (float(agg[f"minority{self.t}"] or 0) + agg["suppressed"]) / ev.rows


class FlexCostCM(FlexMetric):
    name = "cm-cost"

    def __init__(self, target: int, cost: list[list[float]], suppressed: str | float = "group") -> None:
        self.t = target
        self.cost = cost
        self.suppressed = suppressed

    def value(self, agg, ev):
        c = len(self.cost)
        total = 0.0
        for j in range(c):
            for m in range(c):
                if j != m:
                    total += self.cost[j][m] * float(agg[f"conf{self.t}_{j}_{m}"] or 0)
        sup = [float(agg[f"sup{self.t}_{j}"] or 0) for j in range(c)]
        if self.suppressed == "group":
            if sum(sup) > 0:
                maj = max(range(c), key=lambda j: (sup[j], -j))
                total += sum(sup[j] * self.cost[j][maj] for j in range(c))
        else:
            total += float(self.suppressed) * agg["suppressed"]
        return total / ev.rows


class FlexRegression(FlexMetric):
    name = "regression"

    def __init__(self, target: int, dispersion: str = "variance") -> None:
        self.t = target
        self.dispersion = dispersion

    def value(self, agg, ev):
        tot = ev.gstats.totals["regression"][self.t]
        if self.dispersion == "mad":
            base = tot["mad"]
            return float(agg[f"mad{self.t}"]) / base if base > 0 else 0.0
        n = ev.rows
        base = tot["s2"] - tot["s1"] * tot["s1"] / n
        s = agg["suppressed"]
        sse = float(agg[f"sse{self.t}"] or 0.0)
        if s:
            s1, s2 = float(agg[f"sup_s1_{self.t}"] or 0), float(agg[f"sup_s2_{self.t}"] or 0)
            sse += s2 - s1 * s1 / s
        return max(sse, 0.0) / base if base > 1e-12 else 0.0


class FlexShare(FlexMetric):
    """A lattice metric over the released values' domain shares (ARX's Loss ``loss``, its
    arithmetic mean ``loss-arithmetic``, ``granularity``: :mod:`sqlanon.metrics.loss`), computed by
    the lattice metric's own formulas (:meth:`~sqlanon.metrics.loss.Loss.value`) from the same
    per-QI sums a lattice node's statement gives: ``{prefix}_rel{i}`` (released rows times their
    value's share) and ``{prefix}_sup{i}`` (suppressed rows times theirs), with the suppressed
    rows. A flexible cut's released value covers the leaves its group holds, its share their
    number over the hierarchy's leaves (:meth:`group_values`; granularity: ARX's share by label,
    :func:`~sqlanon.metrics.loss.arx_share`), so a full-domain node scores here exactly what
    it scores in the lattice.

    The evaluator's per-leaf lists then hold shares instead of LM losses (:attr:`unit`), and
    every batch is scored per column (the suppressed rows' share per QI: ``lm_sup{i}``)."""

    needs_lm = True
    #: the per-leaf lists hold shares (not LM losses), summed per QI over the suppressed rows
    unit = "share"

    def __init__(self, metric) -> None:
        self.metric = metric
        self.name = metric.name
        #: granularity's shares go by the released label (:func:`~sqlanon.metrics.loss.arx_share`)
        self.by_label = isinstance(metric, Granularity)

    def group_values(self, groups, hierarchy) -> list[float]:
        """Per released group ``(label, _, leaves)`` of a cut, its share."""
        m = len(hierarchy.rows)
        if isinstance(self.metric, Granularity):
            share_map = self.metric.share_map(hierarchy)
            return [arx_share(share_map, label, len(leaves), m) for label, _, leaves in groups]
        return [len(leaves) / m if m else 0.0 for _, _, leaves in groups]

    def sums(self, agg: dict, ev: FlexibleEvaluator):
        """The lattice statement's figures of this candidate: ``suppressed`` and per QI the
        released and the suppressed rows' shares summed (a node's :class:`NodeStats` shape)."""
        from types import SimpleNamespace

        prefix = self.metric.prefix
        extra = {}
        for i in range(ev.n):
            sup = float(agg.get(f"lm_sup{i}") or 0.0)
            extra[f"{prefix}_rel{i}"] = agg["colsum"][i] - sup
            extra[f"{prefix}_sup{i}"] = sup
        return SimpleNamespace(suppressed=int(agg["suppressed"]), extra=extra)

    def value(self, agg, ev):
        return float(self.metric.value(ev.stats, None, self.sums(agg, ev)))


class FlexWeighted(FlexMetric):
    name = "weighted"

    def __init__(self, parts: list[tuple[float, FlexMetric]]) -> None:
        self.parts = parts
        self.needs_lm = any(m.needs_lm for _, m in parts)

    def value(self, agg, ev):
        return sum(w * m.value(agg, ev) for w, m in self.parts)


# ---------------------------------------------------------------------------------------------
# options -> targets and the objective


@dataclass
class Objective:
    metric: FlexMetric
    report: dict  # name -> FlexMetric reported besides the objective (lm, cm)
    class_targets: list[ClassTarget]
    regression_targets: list[RegressionTarget]


def read_cost_matrix(spec, values: list[str]) -> list[list[float]]:
    """``{"true class": {"assigned class": cost}}`` as JSON text or a .json path; missing pairs are
    1 off the diagonal and 0 on it."""
    if isinstance(spec, str):
        spec = load_json_spec(spec, "cost_matrix")
    if not isinstance(spec, dict):
        raise ConfigError("cost_matrix must map a true class to {assigned class: cost}")
    for a, row in spec.items():
        if str(a) not in values:
            raise ConfigError(f"cost_matrix names class {a!r}, not a value of the class column ({values})")
        if not isinstance(row, dict) or any(str(b) not in values for b in row):
            raise ConfigError(f"cost_matrix row {a!r} must map classes of {values} to costs")
    out = []
    for a in values:
        row = {str(k): v for k, v in spec.get(a, {}).items()} if a in spec else {}
        try:
            out.append([float(row.get(b, 0.0 if a == b else 1.0)) for b in values])
        except (TypeError, ValueError):
            raise ConfigError(f"cost_matrix row {a!r} has a non-numeric cost") from None
    return out


#: the lattice metrics the genetic search optimizes over flexible cuts (:class:`FlexShare`)
SHARE_METRICS = ("loss", "loss-arithmetic", "granularity")


def build_objective(name: str, options: dict, class_column: str | None, lattice_metric=None) -> tuple[Objective, list]:
    """Objective from ``name`` (lm, cm, cm-cost, regression, weighted, or a lattice metric of
    :data:`SHARE_METRICS`: ``lattice_metric``, the run's metric object with its weights and
    ``gs_factor``, else the metric's defaults) and the search options:

    * ``cost_matrix``: JSON (text or path) for ``cm-cost``; ``cost_suppressed``: ``group`` (default)
      or a number (cost per suppressed row);
    * ``regression_target`` (column) and ``dispersion`` (``variance`` | ``mad``);
    * ``weights``: ``KIND[:COLUMN]=W,...`` with KIND in lm, cm, cm-cost, regression
      (e.g. ``cm:salary-class=0.7,regression:age=0.3``).
    """
    class_targets: list[ClassTarget] = []
    regression_targets: list[RegressionTarget] = []

    def class_index(column: str | None, confusion: bool = False) -> int:
        column = column or class_column
        if not column:
            raise ConfigError("the CM metric needs --class-column")
        for i, t in enumerate(class_targets):
            if t.column == column:
                t.confusion = t.confusion or confusion
                return i
        class_targets.append(ClassTarget(column, confusion=confusion))
        return len(class_targets) - 1

    def regression_index(column: str | None) -> int:
        column = column or options.get("regression_target")
        if not column:
            raise ConfigError("the regression metric needs --option regression_target=COLUMN")
        dispersion = str(options.get("dispersion", "variance"))
        if dispersion not in ("variance", "mad"):
            raise ConfigError(f"dispersion must be variance or mad, got {dispersion!r}")
        for i, t in enumerate(regression_targets):
            if t.column == column:
                return i
        regression_targets.append(RegressionTarget(column, dispersion))
        return len(regression_targets) - 1

    cost_specs: list[tuple[FlexCostCM, object]] = []

    def make(kind: str, column: str | None) -> FlexMetric:
        if kind == "lm":
            return FlexLM()
        if kind == "cm":
            return FlexCM(class_index(column))
        if kind == "cm-cost":
            if "cost_matrix" not in options:
                raise ConfigError("the cm-cost metric needs --option cost_matrix=JSON|PATH")
            sup = options.get("cost_suppressed", "group")
            if sup != "group":
                try:
                    sup = float(sup)
                except ValueError:
                    raise ConfigError(f"cost_suppressed must be 'group' or a number, got {sup!r}") from None
            m = FlexCostCM(class_index(column, confusion=True), [], sup)
            cost_specs.append((m, options["cost_matrix"]))
            return m
        if kind == "regression":
            t = regression_index(column)
            return FlexRegression(t, regression_targets[t].dispersion)
        raise ConfigError(f"unknown genetic objective {kind!r}; choose lm, cm, cm-cost, regression or weighted")

    if name in SHARE_METRICS:
        share = FlexShare(lattice_metric if lattice_metric is not None and lattice_metric.name == name else METRICS[name]())
        return Objective(share, {name: share}, class_targets, regression_targets), cost_specs
    if name == "weighted":
        spec = options.get("weights")
        if not spec:
            raise ConfigError("the weighted objective needs --option weights=KIND[:COLUMN]=W,...")
        parts = []
        for item in str(spec).split(","):
            if not item.strip():
                continue
            term, eq, w = item.partition("=")
            if not eq:
                raise ConfigError(f"bad weights term {item!r}; write KIND[:COLUMN]=WEIGHT")
            kind, _, column = term.strip().partition(":")
            try:
                weight = float(w)
            except ValueError:
                raise ConfigError(f"bad weight {w!r} in {item!r}") from None
            parts.append((weight, make(kind.strip(), column.strip() or None)))
        metric: FlexMetric = FlexWeighted(parts)
    else:
        metric = make(name, None)
    report: dict[str, FlexMetric] = {"lm": FlexLM()}
    if class_column:
        report["cm"] = FlexCM(class_index(class_column))
    return Objective(metric, report, class_targets, regression_targets), cost_specs


# ---------------------------------------------------------------------------------------------
# evaluation with per-attribute caching

#: bytes of per-attribute parts kept (an equal share per QI, the oldest dropped first: a part of a
#: QI with thousands of leaves holds its codes and losses, two arrays of that length)
PART_CACHE_BYTES = 16 << 20
#: whole-solution results kept (the oldest dropped first; the population's own are kept by the
#: search, :class:`sqlanon.search.genetic.planner.GA`)
MEMO_ENTRIES = 100_000


class FlexibleEvaluator:
    """Scores chromosomes of a :class:`sqlanon.search.genetic.cut.Layout`: per-attribute parts cached, aggregates by
    one SQL statement per batch, whole-solution results memoized."""

    def __init__(self, stats, layout, objective: Objective, requirement, cost_specs=(), needs=None, weights=None, local: bool = True) -> None:
        self.stats = stats
        self.layout = layout
        self.objective = objective
        self.n = len(layout.qis)
        #: normalized attribute weights (None: all 1); they multiply each QI's LM loss per row
        self.weights = None if weights is None else [float(w) for w in weights]
        self.weight_sum: float = self.n if self.weights is None else sum(self.weights, 0.0)
        self.requirement = requirement
        self.budget = requirement.budget
        self.gstats = GeneticStats(stats, objective.class_targets, objective.regression_targets, requirement.predicate(), needs)
        #: False: every batch by SQL, even when the in-process path could score it
        self.gstats.local = local
        self._cost_specs = list(cost_specs)
        self.part_cache: list[dict] = [dict() for _ in range(self.n)]
        self.part_bytes = [0] * self.n
        self._freqs: list = [None] * self.n
        self.part_limit = PART_CACHE_BYTES
        self.memo: dict[bytes, dict] = {}
        self.memo_limit = MEMO_ENTRIES
        self.lm = objective.metric.needs_lm or "lm" in objective.report
        #: ``share``: the per-leaf lists hold the metric's domain shares (:class:`FlexShare`),
        #: every batch scored per column; ``lm``: LM losses
        self.unit = objective.metric.unit
        #: the lattice metric applies the attribute weights itself (in its aggregation)
        if self.unit == "share":
            self.weights, self.weight_sum = None, float(self.n)
        #: when set (by a search that ranks every infeasible solution below every feasible one
        #: and holds feasible ones only), the LM part is computed only for candidates suppressing
        #: at most this many rows; the others get the value ``inf``
        self.lm_within: int | None = None

    def prepare(self) -> None:
        self.gstats.prepare()
        self.rows = self.gstats.totals["rows"]
        for m, spec in self._cost_specs:
            m.cost = read_cost_matrix(spec, self.gstats.class_targets[m.t].values)

    def part(self, i: int, bits: tuple) -> dict:
        """What attribute ``i``'s cut contributes, cached by its bit string."""
        cache = self.part_cache[i]
        hit = cache.get(bits)
        if hit is not None:
            return hit[0]
        coder = self.layout.coders[i]
        w = 1.0 if self.weights is None else self.weights[i]
        fast = coder.numeric and not (self.unit == "share" and self.objective.metric.by_label)  # type: ignore[attr-defined]
        if fast:  # intervals: arrays throughout, no per-leaf loop (the same values)
            codes, group_loss, sizes = coder.group_arrays(bits)
            if self.unit == "share":
                m = len(self.stats.hierarchies[i].rows)
                group_loss = sizes / m if m else np.zeros(len(sizes), dtype=np.float64)
            elif self.weights is not None:
                group_loss = w * group_loss
            n_groups = len(sizes)
        else:
            groups = coder.groups(bits)
            codes = np.zeros(coder.n_leaves, dtype=np.int64)
            if self.unit == "share":
                values = self.objective.metric.group_values(groups, self.stats.hierarchies[i])  # type: ignore[attr-defined]
            else:
                values = [l if self.weights is None else w * l for _, l, _ in groups]
            for g, (_, _, leaves) in enumerate(groups):
                codes[leaves] = g
            group_loss = np.array(values, dtype=np.float64)
            n_groups = len(groups)
        loss = group_loss[codes]
        # a running sum in leaf order: Python's sequential sum of the same products (a pairwise
        # sum rounds differently and can reorder ties)
        colsum = float(np.cumsum(self._freq(i) * loss)[-1]) if len(loss) else 0.0
        entry = {"codes": codes, "loss": loss, "group_loss": group_loss, "colsum": colsum, "groups": n_groups}
        size = codes.nbytes + loss.nbytes + group_loss.nbytes + len(bits)
        share = self.part_limit // max(self.n, 1)
        while cache and self.part_bytes[i] + size > share:  # the oldest go first
            self.part_bytes[i] -= cache.pop(next(iter(cache)))[1]
        cache[bits] = (entry, size)
        self.part_bytes[i] += size
        return entry

    def _freq(self, i: int) -> np.ndarray:
        """QI ``i``'s rows per leaf as doubles (once per QI)."""
        if self._freqs[i] is None:
            self._freqs[i] = np.asarray(self.stats.column_freqs[i], dtype=np.float64)
        return self._freqs[i]

    def cache_bytes(self) -> int:
        """Bytes held by the per-attribute parts (at most :data:`PART_CACHE_BYTES` plus one part)."""
        return sum(self.part_bytes)

    def score(self, chromosomes: Sequence[tuple], per_column: bool = False, keys: Sequence[bytes] | None = None) -> list[dict]:
        """Aggregates + objective value + reported metrics per chromosome (memoized by
        :func:`sqlanon.search.genetic.cut.chromosome_key`; ``keys``: the chromosomes' keys when
        the caller has them)."""
        keys = [chromosome_key(ch) for ch in chromosomes] if keys is None else keys
        todo, seen, known = [], set(), {}
        for ch, key in zip(chromosomes, keys):
            if key in self.memo and not per_column:
                known[key] = self.memo[key]  # held here: scoring the others may evict it
            elif key not in seen:
                seen.add(key)
                todo.append((ch, key))
        fresh = self._evaluate(todo, per_column) if todo else {}
        known.update(fresh)
        return [known[key] for key in keys]

    def _per_column(self, per_column: bool) -> bool:
        """Whether a batch is scored per column: asked for, or a share metric (its value needs
        every QI's suppressed share)."""
        return per_column or self.unit == "share"

    def _evaluate(self, todo: list[tuple[tuple, bytes]], per_column: bool) -> dict[bytes, dict]:
        """Score ``todo`` (chromosomes not memoized, with their keys) in one batch; memoize and
        return them."""
        fresh: dict[bytes, dict] = {}
        cands, parts_of = [], []
        caches, part = self.part_cache, self.part
        for ch, _ in todo:
            parts = []
            for i, bits in enumerate(self.layout.split(ch)):
                hit = caches[i].get(bits)  # most parts are their parents' (held: no call)
                parts.append(hit[0] if hit is not None else part(i, bits))
            parts_of.append(parts)
            cands.append({"codes": [p["codes"] for p in parts], "groups": [p["groups"] for p in parts], "leaf_loss": [p["loss"] for p in parts],
                          "group_loss": [p["group_loss"] for p in parts]})
        rows = self.gstats.evaluate(cands, lm=self.lm, per_column=self._per_column(per_column), lm_within=self.lm_within)
        for (_, key), parts, row in zip(todo, parts_of, rows):
            agg = self._scored(dict(row), parts, per_column)
            while len(self.memo) >= max(self.memo_limit, 1):  # the oldest go first
                del self.memo[next(iter(self.memo))]
            self.memo[key] = agg
            fresh[key] = agg
        return fresh

    def _scored(self, agg: dict, parts: list[dict], per_column: bool) -> dict:
        """One chromosome's batch row ``agg`` completed: suppressed rows, LM figures, objective
        value, feasibility and reported metrics (only those four without ``per_column``)."""
        agg["suppressed"] = int(agg["suppressed"] or 0)
        unknown = self._round_suppressed_sums(agg, per_column)
        agg["colsum"] = [p["colsum"] for p in parts]
        if per_column and self.lm and self.unit == "lm":
            agg["lm_sup"] = sum(float(agg[f"lm_sup{i}"] or 0) for i in range(self.n))
            agg["lm_per_column"] = [
                (agg["colsum"][i] - float(agg[f"lm_sup{i}"] or 0) + (1.0 if self.weights is None else self.weights[i]) * agg["suppressed"]) / self.rows
                for i in range(self.n)
            ]
        # a release of nothing is no answer, whatever the budget allows
        agg["feasible"] = self.requirement.fits(agg["suppressed"], self.rows)
        if unknown:
            # over lm_within: an infeasible candidate whose LM the search does not need
            agg["value"] = math.inf if self.objective.metric.needs_lm else self.objective.metric.value(agg, self)
            agg["report"] = {name: (math.inf if m.needs_lm else m.value(agg, self)) for name, m in self.objective.report.items()}
        else:
            metric = self.objective.metric
            agg["value"] = metric.value(agg, self)
            # a share metric reports itself: its value once, not twice
            agg["report"] = {name: (agg["value"] if m is metric else m.value(agg, self)) for name, m in self.objective.report.items()}
        if not per_column:
            agg = {k: agg[k] for k in ("value", "feasible", "suppressed", "report")}
        return agg

    def _round_suppressed_sums(self, agg: dict, per_column: bool) -> bool:
        """Round the suppressed rows' sums of ``agg`` in place (sums of doubles in the engine's
        parallel, unordered order: rounded so that equal solutions rank equal run after run);
        whether its LM is unknown (over ``lm_within``, not asked per column)."""
        if self.unit == "share":  # the shares of the suppressed rows per QI
            for i in range(self.n):
                agg[f"lm_sup{i}"] = round(float(agg[f"lm_sup{i}"] or 0.0), 9)
        unknown = "lm_sup" in agg and agg["lm_sup"] is None and not per_column
        if "lm_sup" in agg and not unknown:
            agg["lm_sup"] = round(float(agg["lm_sup"] or 0.0), 6)
        return unknown

    @property
    def evaluations(self) -> int:
        return self.gstats.evaluations

    def drop(self) -> None:
        self.gstats.drop()
