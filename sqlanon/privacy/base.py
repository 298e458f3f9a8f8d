"""A privacy model is a predicate over one equivalence class (a row of a node's class table).

Rows of classes that fail any model are suppressed; a node satisfies the requirement when the
suppressed rows fit the budget (MaxSup). k-anonymity and distinct l-diversity are monotone under
generalization even with suppression: a class merged with a passing class passes, so suppressed
rows never grow. Entropy l-diversity and t-closeness are monotone only *without* suppression:
merging a passing class with a failing one can fail (``{x, y}`` + ``{x x x x x}``), so with a budget
a generalization may suppress more rows than its specialization (``monotone_with_suppression``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.privacy.needs import ClassNeeds


class PrivacyModel:
    name = "model"
    needs = ClassNeeds()
    #: False when merging a passing class with a failing one can fail (then, with a suppression
    #: budget, neither satisfaction nor suppressed rows are monotone over the lattice)
    monotone_with_suppression = True

    def predicate(self) -> exp.Expr:  # pragma: no cover - interface
        raise NotImplementedError

    def class_ok(self, cls: dict) -> bool:  # pragma: no cover - interface
        """The same predicate in Python over a class dict (``cnt``, ``s_counts``), for checkers."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"model": self.name}


@dataclass
class Requirement:
    """Privacy models and the suppression budget (absolute rows)."""

    models: list[PrivacyModel]
    budget: int = 0
    max_suppression: float = 0.0
    needs: ClassNeeds = field(default_factory=ClassNeeds)

    def __post_init__(self) -> None:
        for m in self.models:
            self.needs = self.needs.merge(m.needs)

    def predicate(self) -> exp.Expr:
        parts = [m.predicate() for m in self.models]
        if not parts:
            return exp.Boolean(this=True)
        return exp.and_(*parts) if len(parts) > 1 else parts[0]

    def class_ok(self, cls: dict) -> bool:
        return all(m.class_ok(cls) for m in self.models)

    @property
    def monotone(self) -> bool:
        """Whether satisfaction and suppressed rows are monotone over the lattice (predictive
        tagging, binary search on height, Incognito's subset pruning are valid)."""
        return self.budget == 0 or all(getattr(m, "monotone_with_suppression", True) for m in self.models)

    @property
    def k(self) -> int:
        return max([getattr(m, "k", 1) for m in self.models] or [1])

    def describe(self) -> list[dict]:
        return [m.describe() for m in self.models]
