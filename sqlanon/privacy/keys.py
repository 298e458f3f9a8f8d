"""A policy key a privacy model declares: its name, type, default, constraint and help text.

The privacy section of the policy (:class:`sqlanon.config.policy.PrivacyPolicy`), its JSON
Schema and the CLI's privacy flags (``--l``, ``--t``, ...: :mod:`sqlanon.cli.flags`) are built
from these declarations (:data:`sqlanon.privacy.registry.POLICY_KEYS`), so a model's keys are
written once, in its module.

>>> key = PolicyKey("t", float, help="t of t-closeness.", schema={"minimum": 0})
>>> key.annotation
typing.Optional[float]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class PolicyKey:
    """One key of the policy's privacy section.

    ``default`` None makes the key optional (``type | None``; absent is not asked); ``choices``
    are the values a text key takes (two models declaring one key add their choices: the
    ``l_diversity`` variants); ``schema`` adds JSON Schema bounds (``minimum``,
    ``exclusiveMinimum``, ``maximum``)."""

    name: str
    type: type
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def annotation(self) -> Any:
        """The field's type: ``Optional[type]`` unless a default is given."""
        return Optional[self.type] if self.default is None else self.type  # noqa: UP045  (a runtime type object for pydantic and typer)

    def merged(self, other: PolicyKey) -> PolicyKey:
        """This key with the choices of another declaration of it."""
        return PolicyKey(self.name, self.type, self.default, self.help, tuple(dict.fromkeys(self.choices + other.choices)), self.schema)

    def describe(self) -> str:
        """The help text (a text key with choices and no help: them, ``a | b | c.``)."""
        return self.help or " | ".join(self.choices) + "."
