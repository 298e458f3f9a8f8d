"""The release of a DataFrame input run on sqlanon's own connection: an in-memory table.

With a DataFrame (or Arrow) input and no ``connection=``, sqlanon opens an in-memory DuckDB
connection of its own (:class:`sqlanon.config.frames.FrameInput`). With no output named, the
release is written there, as table :data:`MEMORY_TABLE` with its
registry row (both or neither, as for any table release), and the :class:`Release` keeps the
connection: ``release.to_pandas()`` reads that table, ``release.close()`` closes it. Nothing
touches the disk. The release is materialized (not a lazy query over the frame): changing the
DataFrame afterwards does not change the release.
"""

from __future__ import annotations


#: the in-memory table a DataFrame input's release is written to, on sqlanon's own connection
MEMORY_TABLE = "sqlanon_release"
#: the report's ``output`` of an in-memory release
MEMORY = f"memory (table {MEMORY_TABLE})"


def _owned(rel_input) -> bool:
    return rel_input is not None and rel_input.owned is not None


def default_output(policy, rel_input, dry_run: bool) -> None:
    """A DataFrame input on sqlanon's own connection with no output: the in-memory table."""
    out = policy.release
    if _owned(rel_input) and not dry_run and not (out.output or out.output_table or out.in_place):
        out.output_table = MEMORY_TABLE


def adopt(release, rel_input) -> None:
    """The release keeps the connection its in-memory table lives on (or, when nothing was
    written there, a dry run or a file output, the connection is closed)."""
    state = release._state
    if state.get("kind") == "table" and state.get("table") == MEMORY_TABLE:
        state["owned"] = rel_input.owned
        rel_input.owned = None
        release._report["output"] = MEMORY
        return
    rel_input.close()
