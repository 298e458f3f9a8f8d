"""Parquet files read as one input agree on their columns, or the input is refused.

An engine reads a folder or glob of Parquet files with one schema, taken from one file, and casts
the others' columns to it: a column that is text in one file and a number in another fails in the
middle of the scan (DuckDB: ``failed to cast column "age" ... to INT32``, quoting a value), and a
float read as an integer would be rounded without a word. Only the files' footers are read.

>>> import pyarrow as pa
>>> kind_of(pa.int32()) == kind_of(pa.int64()), kind_of(pa.string()), kind_of(pa.float64())
(True, 'text', 'floating point')
"""

from __future__ import annotations

from sqlanon.errors import ConfigError, EngineInputError


def kind_of(t) -> str:
    """The kind of an Arrow type that an engine casts within without loss or refusal."""
    import pyarrow as pa

    checks = (
        (pa.types.is_boolean, "boolean"),
        (pa.types.is_integer, "integer"),
        (pa.types.is_floating, "floating point"),
        (pa.types.is_decimal, "decimal"),
        (lambda x: pa.types.is_string(x) or pa.types.is_large_string(x) or pa.types.is_string_view(x), "text"),
        (lambda x: pa.types.is_binary(x) or pa.types.is_large_binary(x), "binary"),
        (pa.types.is_date, "date"),
        (pa.types.is_timestamp, "timestamp"),
    )
    for test, name in checks:
        if test(t):
            return name
    return str(t)


def _columns(path: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise EngineInputError(f"{path} is not a Parquet file ({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
    return {field.name: kind_of(field.type) for field in schema}


def check_agree(described: str, paths: list[str]) -> None:
    """Refuse ``paths`` (the files of the input ``described``) when they disagree: a column one
    file lacks, or one whose kind differs (:func:`kind_of`). The message names the column and
    two files, never a value."""
    if len(paths) < 2:
        return
    first = _columns(paths[0])
    for path in paths[1:]:
        other = _columns(path)
        for name, kind in first.items():
            if name not in other:
                raise ConfigError(f"input {described}: the Parquet files disagree: {path} has no column {name!r} ({paths[0]} has it); give files of one schema")
            if other[name] != kind:
                raise ConfigError(f"input {described}: the Parquet files disagree on column {name!r}: {paths[0]} has {kind}, {path} has {other[name]} (the engine reads them with one schema); give files of one schema")
        extra = [n for n in other if n not in first]
        if extra:
            raise ConfigError(f"input {described}: the Parquet files disagree: {path} has column {extra[0]!r}, {paths[0]} has not; give files of one schema")
