"""The profile as aligned text (a rich table per column, then the risk and the policy written)."""

from __future__ import annotations

from typing import Any
from sqlanon.profiling.writer import NULLS_ADVICE, run_command
from sqlanon.risk import text_lines


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _hierarchy(c: dict[str, Any]) -> str:
    h = c.get("hierarchy")
    if not h:
        return ""
    return h["kind"] if h["kind"] in ("frequency", "linked") else h["spec"]


def render(result: dict, console) -> None:
    """Print ``result`` (:func:`sqlanon.run.profile.profile`) on a rich ``console``."""
    from rich.table import Table

    sample = result.get("sample")
    where = f"{result['input']}: {result['rows']:,} rows"
    if sample:
        where += f"; measured on a sample of about {sample['percent']:g} % ({sample['rows_read']:,} rows; distinct counts are the sample's)"
    console.print(where, highlight=False, markup=False)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name in ("column", "type", "nulls", "distinct", "unique", "role", "hierarchy", "reason"):
        table.add_column(name, justify="right" if name in ("nulls", "distinct", "unique") else "left", no_wrap=name != "reason", overflow="fold")
    for c in result["columns"]:
        reason = c["reason"]
        table.add_row(c["name"], c["type"], f"{c['nulls']:,}", f"{c['distinct']:,}", _pct(c["uniqueness"]), c["role"], _hierarchy(c), reason)
    console.print(table)
    nulls = result.get("nulls_in_qis") or {}
    if nulls:
        counted = ", ".join(f"{name} ({n:,})" for name, n in nulls.items())
        console.print(f"NULLs in quasi-identifiers: {counted}", highlight=False, markup=False)
        console.print(f"  {NULLS_ADVICE}", highlight=False, markup=False)
    if result.get("risk"):
        console.print(f"risk before anonymization, with the quasi-identifiers {', '.join(result['roles']['qi'])}:", highlight=False, markup=False)
        for line in text_lines(result["risk"]):
            console.print("  " + line, highlight=False, markup=False)
    else:
        console.print("no quasi-identifier found: no risk measured", highlight=False, markup=False)
    if result.get("policy"):
        console.print(f"policy written to {result['policy']}" + (f" (with {', '.join(result['hierarchy_files'])})" if result.get("hierarchy_files") else ""), highlight=False, markup=False)
        console.print(f"next: {run_command(result['policy'])}", highlight=False, markup=False)
