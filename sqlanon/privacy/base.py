"""A privacy model is a predicate over one equivalence class (a row of a node's class table).

Rows of classes that fail any model are suppressed; a node satisfies the requirement when the
suppressed rows fit the budget (MaxSup). k-anonymity and distinct l-diversity are monotone under
generalization even with suppression: a class merged with a passing class passes, so suppressed
rows never grow. Entropy l-diversity and t-closeness are monotone only *without* suppression:
merging a passing class with a failing one can fail (``{x, y}`` + ``{x x x x x}``), so with a budget
a generalization may suppress more rows than its specialization (``monotone_with_suppression``).

A model is one module: the per-class aggregates it declares (:attr:`PrivacyModel.aggregates`,
:class:`sqlanon.privacy.needs.Aggregate`: their per-value and histogram forms, assembled by
:mod:`sqlanon.privacy.aggregates`) and asks for (:attr:`PrivacyModel.needs`), its policy keys
(:attr:`PrivacyModel.policy_keys`, :class:`sqlanon.privacy.keys.PolicyKey`: the policy's privacy
section and the CLI flags are built from them), how it is read from a policy
(:meth:`PrivacyModel.from_policy`, refusing key combinations in :meth:`PrivacyModel.validate_policy`),
its SQL predicate and its Python twin (:meth:`PrivacyModel.class_ok`), an example of its keys
(:attr:`PrivacyModel.example`, for the oracle tests), registered by one line in
:data:`sqlanon.privacy.registry.MODELS`, documented by one page ``docs/models/<name>.md``. A *table-level* model (``table_level``: the average
re-identification risk) wraps the class-level predicate instead (:meth:`PrivacyModel.wrap`, with
window functions over the class table) and its twin refines the class verdicts
(:meth:`PrivacyModel.refine`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.privacy.figure import Figure
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import Aggregate, ClassNeeds


class PrivacyModel:
    name = "model"
    needs = ClassNeeds()
    #: False when merging a passing class with a failing one can fail (then, with a suppression
    #: budget, neither satisfaction nor suppressed rows are monotone over the lattice)
    monotone_with_suppression = True
    #: False when, even without suppression, a generalization of a passing node can fail (an
    #: estimate that is not concave under merging): then nothing is monotone over the lattice
    monotone_with_generalization = True
    #: a predicate over the whole class table (:meth:`wrap`), not over one class
    table_level = False
    #: its name in messages (a search that cannot honour it names it so)
    label = ""
    #: the per-class aggregates it may ask for (their forms; :attr:`needs` says which it asks)
    aggregates: tuple[Aggregate, ...] = ()
    #: its policy keys (a key two models share, such as ``sensitive_column``, is declared by each)
    policy_keys: tuple[PolicyKey, ...] = ()
    #: the policy keys (of its privacy section) that ask for this model (SafePub refuses them, the docs list them)
    asks: tuple[str, ...] = ()
    #: policy keys asking for it on a small table, for the oracle tests (with a sensitive column)
    example: dict[str, Any] = {}
    #: a class-size lower bound it sets (k-anonymity's k)
    k = 1
    #: asked alone, it stands in for k-anonymity (no --k needed: k is 1)
    replaces_k = False
    #: the models it stands in for when both are asked (a variant read from the same keys)
    replaces: tuple[str, ...] = ()
    #: its measured figure in ``sqlanon check`` (:mod:`sqlanon.privacy.figure`; None: the check
    #: decides it by its Python twin, or lists it as not checked)
    figure: Figure | None = None

    # -- from a policy --------------------------------------------------------------------------

    @classmethod
    def validate_policy(cls, policy) -> None:
        """Refuse this model's keys given without it, or it without the keys it needs."""

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        """The instances of this model the policy asks for (none, usually)."""
        return []

    @classmethod
    def asked(cls, policy) -> bool:
        return any(getattr(policy.privacy, key) is not None for key in cls.asks)

    @classmethod
    def require_sensitive_column(cls, policy, key: str, label: str) -> None:
        """Refuse the policy key ``key`` (asking for this model, ``label`` in the message) given
        without a sensitive column."""
        if getattr(policy.privacy, key) is not None and not policy.privacy.sensitive_column:
            raise ConfigError(f"{label} (--{key.replace('_', '-')}) needs --sensitive-column")

    def statistics_extras(self, policy, session) -> dict[str, Any]:
        """Keywords for :class:`sqlanon.stats.Statistics` (a population table, a sensitive hierarchy)."""
        return {}

    def to_policy(self) -> dict:
        """The policy keys of this object (``sqlanon.anonymize(privacy=[...])``)."""
        raise ConfigError(f"privacy model {type(self).__name__} cannot be given as an object (yet); use its policy keys")

    def bind(self, stats) -> None:
        """After the scan: what the model reads from the table (its size, its sensitive values)."""

    # -- the predicate --------------------------------------------------------------------------

    def predicate(self) -> exp.Expr:  # pragma: no cover - interface
        raise NotImplementedError

    def class_ok(self, cls: dict) -> bool:  # pragma: no cover - interface
        """The same predicate in Python over a class dict (``cnt``, ``s_counts``), for checkers."""
        raise NotImplementedError

    def wrap(self, ok: exp.Expr) -> exp.Expr:  # pragma: no cover - table-level interface
        """A table-level model: the release predicate given the class-level one ``ok``."""
        raise NotImplementedError

    def refine(self, classes: list[dict], ok: list[bool]) -> list[bool]:  # pragma: no cover - table-level interface
        """A table-level model's Python twin: the release verdicts given the class-level ones."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"model": self.name}

    # -- why no plan satisfies it (:mod:`sqlanon.privacy.diagnosis`) ----------------------------

    def worst(self) -> list[tuple[str, exp.Expr]]:
        """Aggregates over a node's class table that find its worst class (none: it is named by
        the rows it suppresses alone)."""
        return []

    def describe_worst(self, v: dict) -> str:
        """The words for :meth:`worst`'s values (empty: nothing to say)."""
        return ""

#: the requirement's own key: the suppression budget
MAX_SUPPRESSION = PolicyKey("max_suppression", float, 0.0, "Fraction of rows that may be suppressed (MaxSup).", schema={"minimum": 0, "maximum": 1})


def sensitive_distribution(stats) -> dict:
    """The table's share of rows per sensitive value: the distribution the Python twins of the
    distribution models (t-closeness, beta-likeness, delta-disclosure) compare each class with."""
    return {v: n / stats.rows for v, n in stats.sensitive_domain}


def budget_rows(max_suppression: float, rows: int) -> int:
    """The suppression budget in rows: ``floor(max_suppression * rows)`` (a hair of tolerance so
    0.07 * 100 is 7, not 6)."""
    return math.floor(max_suppression * rows + 1e-9)


@dataclass
class Requirement:
    """Privacy models and the suppression budget (absolute rows, :meth:`bind` sets it from the
    table's size and ``max_suppression``)."""

    models: list[PrivacyModel]
    budget: int = 0
    max_suppression: float = 0.0
    needs: ClassNeeds = field(default_factory=ClassNeeds)

    def __post_init__(self) -> None:
        for m in self.models:
            self.needs = self.needs.merge(m.needs)

    def add(self, model: PrivacyModel) -> None:
        self.models.append(model)
        self.needs = self.needs.merge(model.needs)

    def budget_for(self, rows: int) -> int:
        """The budget of a table of ``rows`` rows (a local-recoding round's own rows, say)."""
        return budget_rows(self.max_suppression, rows)

    def bind(self, stats) -> None:
        """After the scan: the budget from the table's rows, and every model's view of the table.
        Rows withheld for NULL in a ``nulls: suppress`` QI (``stats.withheld``) count against the
        budget of the whole table: the search spends what they leave."""
        withheld = int(stats.withheld or 0)
        self.budget = self.budget_for(stats.rows + withheld) - withheld
        if self.budget < 0:
            raise UnsatisfiableError(
                f"{withheld:,} rows have NULL in a quasi-identifier whose NULLs are suppressed (nulls: suppress), more than the "
                f"suppression budget of {self.budget_for(stats.rows + withheld):,} rows (max_suppression {self.max_suppression:g} of {stats.rows + withheld:,}); "
                "raise max_suppression or let NULL be a value (nulls: value)"
            )
        for m in self.models:
            m.bind(stats)

    def fits(self, suppressed: int, rows: int | None = None) -> bool:
        """The one "fits the budget" rule: ``suppressed`` rows within the budget and, given the
        ``rows``, at least one released (a release of nothing is no answer, whatever the budget
        allows; an empty table releases its nothing)."""
        return suppressed <= self.budget and (rows is None or rows == 0 or suppressed < rows)

    def for_rows(self, rows: int) -> Requirement:
        """The same models with the budget of a table of ``rows`` rows."""
        return Requirement(list(self.models), budget=self.budget_for(rows), max_suppression=self.max_suppression)

    def predicate(self) -> exp.Expr:
        parts = [m.predicate() for m in self.models if not m.table_level]
        ok: exp.Expr = exp.Boolean(this=True) if not parts else exp.and_(*parts) if len(parts) > 1 else parts[0]
        for m in self.models:
            if m.table_level:
                ok = m.wrap(ok)
        return ok

    def monotone_predicate(self) -> exp.Expr | None:
        """When the requirement is not :attr:`monotone` (a budget, and a model such as t-closeness
        or entropy l-diversity that is not monotone with suppression): the predicate of its
        models that are (k-anonymity, distinct l-diversity). The rows of the classes failing it
        are suppressed whatever the other models say, and they only grow under specialization,
        so they bound every specialization's suppressed rows and a node whose part exceeds the
        budget fails with all its specializations. None when the requirement is monotone, no
        class-level model is monotone, or a table-level model is asked."""
        if self.monotone or any(m.table_level for m in self.models):
            return None
        trivial = [m for m in self.models if m.name == "k-anonymity" and m.k <= 1]  # every class meets k=1
        parts = [m.predicate() for m in self.models if m.monotone_with_suppression and m not in trivial]
        return None if not parts else exp.and_(*parts) if len(parts) > 1 else parts[0]

    def class_ok(self, cls: dict) -> bool:
        return all(m.class_ok(cls) for m in self.models if not m.table_level)

    def released(self, classes: list[dict]) -> list[bool]:
        """The Python twin of :meth:`predicate` over a whole class table (dicts with ``cnt``,
        ``s_counts``, ``key``, ...): which classes are released."""
        ok = [self.class_ok(c) for c in classes]
        for m in self.models:
            if m.table_level:
                ok = m.refine(classes, ok)
        return ok

    @property
    def monotone(self) -> bool:
        """Whether satisfaction and suppressed rows are monotone over the lattice (predictive
        tagging, binary search on height, Incognito's subset pruning are valid)."""
        return all(m.monotone_with_generalization for m in self.models) and (self.budget == 0 or all(m.monotone_with_suppression for m in self.models))

    @property
    def k(self) -> int:
        return max([m.k for m in self.models] or [1])

    def describe(self) -> list[dict]:
        return [m.describe() for m in self.models]
