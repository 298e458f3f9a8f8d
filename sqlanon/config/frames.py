"""A DataFrame or an Arrow table as the input of :func:`sqlanon.anonymize`.

A pandas or polars ``DataFrame``, a ``pyarrow.Table`` (or ``RecordBatch``) or a
``pyarrow.dataset.Dataset`` is registered on a DuckDB connection as a view
``sqlanon_input_<hex>`` and read there like any table: DuckDB scans the frame's own buffers (no
row is copied into Python objects, and no pandas/polars/pyarrow module is imported unless the
object is one of theirs). On a connection of sqlanon's own (no ``connection=``), the release goes
to an in-memory table of that connection unless an output is named, so ``release.to_pandas()``
works and nothing is written to disk.

>>> is_frame([1, 2]), is_frame("adult.csv")
(False, False)
"""

from __future__ import annotations

import contextlib
import uuid

from sqlanon.errors import ConfigError

#: (module prefix, class name) of the objects taken as frames, and how they are described
_FRAMES = {
    ("pandas", "DataFrame"): "pandas.DataFrame",
    ("polars", "DataFrame"): "polars.DataFrame",
    ("pyarrow", "Table"): "pyarrow.Table",
    ("pyarrow", "RecordBatch"): "pyarrow.RecordBatch",
    ("pyarrow", "Dataset"): "pyarrow.dataset.Dataset",
    ("pyarrow", "FileSystemDataset"): "pyarrow.dataset.Dataset",
}
#: frames refused, with what to pass instead (they can be read once only, or are not data yet)
_REFUSED = {
    ("polars", "LazyFrame"): "a polars LazyFrame is a query, not data: pass lazy.collect() (or write it to Parquet)",
    ("pyarrow", "RecordBatchReader"): "a pyarrow RecordBatchReader can be read once only and a run reads its input several times: pass reader.read_all() or a pyarrow Dataset",
}


def _kind(obj) -> tuple[str, str] | None:
    for cls in type(obj).__mro__:
        module = (cls.__module__ or "").split(".")[0]
        key = (module, cls.__name__)
        if key in _FRAMES or key in _REFUSED:
            return key
    return None


def is_frame(obj) -> bool:
    """A pandas/polars DataFrame or an Arrow table/dataset (or one of the refused kinds, which
    :class:`FrameInput` refuses with what to pass instead)."""
    return not isinstance(obj, (str, bytes, dict)) and _kind(obj) is not None


class FrameInput:
    """A frame registered as a temporary view ``sqlanon_input_<hex>`` on a DuckDB connection
    (``connection``, or a new in-memory one this object owns: :attr:`owned`)."""

    def __init__(self, frame, connection=None) -> None:
        key = _kind(frame)
        if key in _REFUSED:
            raise ConfigError(_REFUSED[key])
        assert key is not None
        if connection is not None and type(connection).__module__.startswith("psycopg"):
            raise ConfigError(f"a {_FRAMES[key]} input runs on DuckDB; connection= is a PostgreSQL connection (load the frame there yourself, or leave connection= out)")
        if connection is not None and not _is_duckdb(connection):
            raise ConfigError(f"a {_FRAMES[key]} input runs on a DuckDB connection; connection= is a {type(connection).__name__}")
        import duckdb

        self.frame = frame
        self.what = _FRAMES[key]
        self.connection: duckdb.DuckDBPyConnection = connection if connection is not None else duckdb.connect()
        self.owned: duckdb.DuckDBPyConnection | None = self.connection if connection is None else None
        self.name = f"sqlanon_input_{uuid.uuid4().hex[:12]}"
        self.kept = False
        if self.what == "polars.DataFrame":  # DuckDB scans polars through Arrow (zero-copy buffers)
            frame = frame.to_arrow()
        try:
            self.connection.register(self.name, frame)
        except duckdb.Error as err:
            self.close()
            raise ConfigError(f"DuckDB cannot read this {self.what}: {str(err).splitlines()[0]}") from None
        if not self.columns():
            self.close()
            raise ConfigError(f"the {self.what} input has no columns")

    def columns(self) -> list[str]:
        from sqlglot import exp

        probe = exp.Describe(this=exp.Table(this=exp.to_identifier(self.name, quoted=True)))
        return [row[0] for row in self.connection.execute(probe.sql(dialect="duckdb")).fetchall()]

    def describe(self) -> str:
        """The registry's ``source``: the kind of frame and its columns (no value)."""
        columns = ", ".join(self.columns())
        return f"{self.what}({columns if len(columns) <= 200 else columns[:197] + '...'})"

    def release(self) -> None:
        """Unregister the view (unless a release relation still reads it)."""
        if self.kept:
            return
        with contextlib.suppress(Exception):
            self.connection.unregister(self.name)

    def close(self) -> None:
        """Unregister the view and close the connection this object owns."""
        self.kept = False
        self.release()
        if self.owned is not None:
            with contextlib.suppress(Exception):
                self.owned.close()
            self.owned = None


def _is_duckdb(connection) -> bool:
    import duckdb

    return isinstance(connection, duckdb.DuckDBPyConnection)
