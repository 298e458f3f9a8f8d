"""A privacy model's measured figure in ``sqlanon check``: the keys that ask for it, the SQL
aggregates that measure it over the released classes, how it is written into the check's
result, and its verdict against the required value.

A model sets its figure (``figure = Figure(...)``, or a subclass of :class:`Figure` for what is
its own) beside its other declarations; the checker (:mod:`sqlanon.run.check`,
:mod:`sqlanon.run.by_release`), the keyword parameters of :func:`sqlanon.check` and the flags
of ``sqlanon check`` are read from the registry's figures
(:func:`sqlanon.privacy.registry.figures`, :func:`sqlanon.privacy.registry.check_keys`), so a
new model with a figure is checked with no edit of the checker. A model without a figure is
decided by its Python twin over the released classes, when it can be.

>>> f = Figure(("average_risk",), "r", "average_risk")
>>> f.asks, f.required({"average_risk": 0.2}), f.from_release({"model": "average-risk", "r": 0.2})
('average_risk', 'r=0.2', {'average_risk': 0.2})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import if_
from sqlanon.privacy.needs import ClassNeeds

#: measured numbers are compared with this tolerance (entropies, distances)
EPS = 1e-9


def released(not_star: exp.Expr, e: exp.Expr) -> exp.Expr:
    """``e`` for a released class (``not_star``), NULL for the suppressed one."""
    return if_(not_star.copy(), e, exp.Null())


def flag(key: str) -> str:
    """The CLI flag of a check key (``beta_likeness``: ``--beta-likeness``)."""
    return "--" + key.replace("_", "-")


def verdict(model: str, required: str, measured, ok: bool) -> dict:
    """One verdict of the check's ``verdicts`` list."""
    return {"model": model, "required": required, "measured": measured, "ok": bool(ok)}


@dataclass(frozen=True)
class Figure:
    """A model's figure in the check.

    ``keys``: the check's options it reads (policy keys of the privacy section; the first asks
    for it); ``param``: its name in a verdict's ``required`` (``r=0.2``); ``out``: the result's
    key holding the measured figure; ``stored``: the keys of the release's stored model
    (``privacy.models`` of its registry row) read as options (default: ``param`` as the first
    key); ``at_most``: the figure must be at most the required value (else at least);
    ``sensitive_figure``: a figure of the sensitive column (when none is asked and the sensitive
    column is given, the ``on_sensitive`` figures are measured); ``on_sensitive``: what it asks
    when measured so; ``flag_help``: the help of its keys' ``check`` flags, where it differs
    from the policy's."""

    keys: tuple[str, ...]
    param: str
    out: str
    stored: dict[str, str] = field(default_factory=dict)
    at_most: bool = False
    sensitive_figure: bool = False
    on_sensitive: ClassNeeds | None = None
    flag_help: dict[str, str] = field(default_factory=dict)

    @property
    def asks(self) -> str:
        return self.keys[0]

    def asked(self, opts: dict[str, Any]) -> bool:
        return opts.get(self.asks) is not None

    # -- measuring ------------------------------------------------------------------------------

    def validate(self, opts: dict[str, Any]) -> None:
        """Refuse a value the check cannot measure by (a ConfigError naming its flag)."""

    def needs(self, opts: dict[str, Any]) -> ClassNeeds:
        """The class aggregates measuring it reads, when it is asked."""
        return ClassNeeds()

    def aggregates(self, stats, not_star: exp.Expr, opts: dict[str, Any]) -> list[tuple[str, exp.Expr]]:
        """Its SQL aggregates over the classes (``not_star``: a class is released)."""
        return []

    def twin(self, opts: dict[str, Any]):
        """The model whose Python twin gives its ``ok`` (None: the figure against the value)."""
        return None

    def write(self, out: dict, e: dict, stats, opts: dict[str, Any], ok: bool | None) -> None:
        """Its keys of the result, from the aggregates ``e`` (``ok``: the twin's verdict)."""
        if self.out in e:
            out[self.out] = e[self.out]

    # -- the verdict of a release -----------------------------------------------------------------

    def from_release(self, stored: dict[str, Any]) -> dict[str, Any]:
        """The options a release's stored model (its ``describe()``) sets."""
        read = self.stored or {self.param: self.asks}
        return {option: stored.get(key) for key, option in read.items()}

    def required(self, opts: dict[str, Any]) -> str:
        return f"{self.param}={opts[self.asks]}"

    def holds(self, out: dict, opts: dict[str, Any]) -> bool:
        """Whether the measured figure meets the required value (a twin's: its ``_ok`` key)."""
        measured = out.get(self.out)
        if measured is None:
            return False
        return measured <= opts[self.asks] + EPS if self.at_most else measured >= opts[self.asks] - EPS

    def verdicts(self, name: str, out: dict, opts: dict[str, Any], rows_budget: int) -> list[dict]:
        return [verdict(name, self.required(opts), out.get(self.out), self.holds(out, opts))]


@dataclass(frozen=True)
class TwinFigure(Figure):
    """A figure whose verdict is its model's Python twin's (``out + "_ok"`` in the result), the
    figure beside it; ``positive``: its value must be > 0 (the sensitive column is needed when
    the model reads it)."""

    positive: bool = True

    def validate(self, opts: dict[str, Any]) -> None:
        value = opts.get(self.asks)
        if value is None:
            return
        if "sensitive_column" in self.keys and not opts.get("sensitive_column"):
            raise ConfigError(f"{flag(self.asks)} needs --sensitive-column")
        if self.positive and not value > 0:
            raise ConfigError(f"{flag(self.asks)} must be > 0, got {value}")

    def holds(self, out: dict, opts: dict[str, Any]) -> bool:
        return bool(out.get(f"{self.out}_ok", False))
