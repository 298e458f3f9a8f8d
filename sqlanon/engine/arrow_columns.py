"""Arrow columns built from Python lists by their buffers (numpy and bytes), for the small tables
an engine registers (hierarchies' code tables, release mapping tables).

``pa.array(list)`` and ``pa.array(numpy array)`` import pandas (a cost of its own per process),
and loading a table from bound lists (``UNNEST($1)``) cost DuckDB more CPU than an Arrow scan of
the same rows (a 40K-leaf zip and a 29K-day birth date: docs/measurements.md); arrays made from
their buffers do neither.

>>> import pyarrow as pa
>>> t = arrow_table({"code": (pa.int32(), [0, 1, 2]), "v": (pa.string(), ["a", None, "ünï"])})
>>> t.to_pydict()
{'code': [0, 1, 2], 'v': ['a', None, 'ünï']}
>>> arrow_table({"x": (pa.float64(), [0.5])}) is None
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

#: integer types built from their values' buffer, and their numpy types
INTEGERS: dict[pa.DataType, Any] = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}
#: text types built from their UTF-8 bytes and offsets, and the offsets' numpy type
TEXTS: dict[pa.DataType, Any] = {pa.string(): np.int32, pa.large_string(): np.int64}


def _validity(values: list, missing: int) -> pa.Buffer | None:
    """The validity bitmap of ``values`` with ``missing`` NULLs (None when there are none)."""
    if not missing:
        return None
    valid = np.fromiter((v is not None for v in values), dtype=np.bool_, count=len(values))
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _integers(kind: pa.DataType, values: list) -> pa.Array | None:
    dtype = INTEGERS[kind]
    if not set(map(type, values)) <= {int, type(None)}:  # numpy would read "1" or 1.5 as 1
        return None
    missing = values.count(None)
    try:
        data = np.fromiter(values if not missing else (0 if v is None else v for v in values), dtype=np.int64, count=len(values))
    except (TypeError, ValueError, OverflowError):
        return None
    info = np.iinfo(dtype)
    if len(data) and (data.min() < info.min or data.max() > info.max):
        return None
    return pa.Array.from_buffers(kind, len(values), [_validity(values, missing), pa.py_buffer(data.astype(dtype))], null_count=missing)


def _texts(kind: pa.DataType, values: list) -> pa.Array | None:
    missing = values.count(None)
    texts = values if not missing else ["" if v is None else v for v in values]
    try:
        joined = "".join(texts)  # one encoding of all values (a value that is no text: TypeError)
        data = joined.encode("utf-8")
    except (TypeError, UnicodeEncodeError):  # a lone surrogate is no UTF-8: the bound lists say so
        return None
    if len(data) == len(joined):  # ASCII: a value's bytes are its characters
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        lengths = np.fromiter((len(t.encode("utf-8")) for t in texts), dtype=np.int64, count=len(texts))
    offsets = np.zeros(len(values) + 1, dtype=TEXTS[kind])
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(kind, len(values), [_validity(values, missing), pa.py_buffer(offsets), pa.py_buffer(data)], null_count=missing)


def arrow_table(columns: dict[str, tuple[pa.DataType, list]]) -> pa.Table | None:
    """``{column: (Arrow type, Python values)}`` as an Arrow table built from buffers; None when a
    column's type is neither an integer nor a text type (or its values do not fit it)."""
    arrays = []
    for kind, values in columns.values():
        if kind in INTEGERS:
            array = _integers(kind, values)
        elif kind in TEXTS:
            array = _texts(kind, values)
        else:
            return None
        if array is None:
            return None
        arrays.append(array)
    if not arrays:
        return None
    return pa.Table.from_arrays(arrays, names=list(columns))
