"""DuckDB: 1-based lists (``list_extract``, bound as parameters on the hot path), file readers."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.dialect.base import Dialect
from sqlanon.expr.atoms import literal
from sqlanon.errors import ConfigError


class DuckDBDialect(Dialect):
    name = "duckdb"
    array_base = 1
    binds_lists = True
    #: a QI with more released labels than this is released as text (:meth:`label_type`)
    MAX_LABELS = 4096

    def lookup(self, values: Sequence, code: exp.Expr, params: list | None = None) -> exp.Expr:
        """``list_extract([..], code + 1)``; with ``params`` the list is a bound parameter, so a
        node statement's text is the same for every node (cached) and stays small, read through
        a scalar subquery, ``list_extract((SELECT $1), code + 1)``: a list that is a constant of
        the statement (a bare ``$1`` or a literal) is copied into every vector of rows DuckDB
        reads, at a cost linear in its length (a zip's list of tens of thousands of leaves cost a
        roll-up many times its grouping; the subquery's one row is joined instead:
        docs/measurements.md).

        >>> from sqlanon.dialect import DUCKDB
        >>> from sqlanon.expr.atoms import col
        >>> params = []
        >>> DUCKDB.render(DUCKDB.lookup([3, 1, 2], col("q0"), params)), params
        ('LIST_EXTRACT((SELECT $1), "q0" + 1)', [[3, 1, 2]])
        """
        if params is not None:
            params.append(list(values))
            ph = exp.Subquery(this=exp.select(exp.Placeholder(this=str(len(params)))))
            return exp.Anonymous(this="list_extract", expressions=[ph, exp.Add(this=code, expression=literal(1))])
        return super().lookup(values, code)

    def position(self, values: Sequence[str], value: exp.Expr) -> exp.Expr:
        """``LIST_POSITION([..], value) - 1`` (NULL when absent).

        >>> from sqlanon.dialect import DUCKDB
        >>> DUCKDB.render(DUCKDB.position(["a", "b"], exp.column("x")))
        "LIST_POSITION(['a', 'b'], x) - 1"
        """
        found = exp.Anonymous(this="list_position", expressions=[exp.Array(expressions=[literal(v) for v in values]), value])
        return exp.Sub(this=found, expression=literal(1))

    def label_type(self, labels: Sequence[str]) -> exp.DataType | None:
        """``ENUM('a', 'b', ..)``: a Parquet release of ENUM columns is written several times
        faster than of VARCHAR ones (docs/measurements.md), and reads back as the same strings. (None
        above ``MAX_LABELS`` labels: the type is spelled out in the statement, and casting to an
        ENUM of many labels costs more than the text write it saves; the release is then text.)"""
        if len(labels) > self.MAX_LABELS:
            return None
        return exp.DataType(this=exp.DataType.Type.ENUM, expressions=[exp.Literal.string(v) for v in labels])

    def repeat_rows(self, count: exp.Expr) -> exp.Expr | None:
        """``UNNEST(RANGE(count))``: the row once per number below ``count``.

        >>> from sqlanon.dialect import DUCKDB
        >>> from sqlanon.expr.atoms import col
        >>> DUCKDB.render(DUCKDB.repeat_rows(col("cnt")))
        'UNNEST(RANGE("cnt"))'
        """
        return exp.Unnest(expressions=[exp.Anonymous(this="range", expressions=[count])])

    def element_at(self, array: exp.Expr, code: exp.Expr) -> exp.Expr:
        if isinstance(array, exp.Array):
            return exp.Anonymous(this="list_extract", expressions=[array, exp.Add(this=code, expression=literal(1))])
        # ``offset=1``: the index is 1-based already (see :meth:`Dialect.element_at`)
        return exp.Bracket(this=array, expressions=[exp.Add(this=code, expression=literal(1))], offset=1)

    def source_from(self, source) -> exp.Expr:
        """A table, or DuckDB's own file readers (``read_parquet``/``read_csv``)."""
        if source.kind == "table":
            return source.table_expression()
        if source.kind == "parquet":
            paths = source.paths()
            arg = exp.Array(expressions=[exp.Literal.string(p) for p in paths]) if len(paths) > 1 else exp.Literal.string(paths[0])
            return exp.Table(this=exp.Anonymous(this="read_parquet", expressions=[arg]))
        if source.kind == "csv" and source.all_varchar:
            # the header names the columns and every row must have as many fields: a ragged row is
            # an error naming its line, never a row read by a sniffer's guess (DuckDB's sniffer
            # can read a ragged file as one column, or as no rows)
            header = source.csv_header()
            columns = exp.Struct(expressions=[exp.PropertyEQ(this=exp.Literal.string(c), expression=exp.Literal.string("VARCHAR")) for c in header])
            args: list[exp.Expr] = [exp.Literal.string(source.path)]
            opts = {"delim": source.delimiter or ",", "header": True, "auto_detect": False, "quote": '"', "escape": '"', "columns": columns}
            for key, value in opts.items():
                val: exp.Expr
                if isinstance(value, bool):
                    val = exp.Boolean(this=value)
                elif isinstance(value, exp.Expression):
                    val = value
                else:
                    val = exp.Literal.string(value)
                args.append(exp.PropertyEQ(this=exp.to_identifier(key), expression=val))
            return exp.Table(this=exp.Anonymous(this="read_csv", expressions=args))
        if source.kind == "csv":
            args = [exp.Literal.string(source.path)]
            for key, value in {"delim": source.delimiter or ",", "header": True}.items():
                val = exp.Boolean(this=value) if isinstance(value, bool) else exp.Literal.string(value)
                args.append(exp.PropertyEQ(this=exp.to_identifier(key), expression=val))
            return exp.Table(this=exp.Anonymous(this="read_csv", expressions=args))

        raise ConfigError(f"unknown source kind {source.kind!r}")

    def copy_to(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> exp.Expr:
        """``COPY (query) TO path``: DuckDB writes the file itself, rows never reach Python."""
        if kind == "parquet":
            params = [exp.CopyParameter(this=exp.var("FORMAT"), expression=exp.var("PARQUET"))]
        else:
            params = [
                exp.CopyParameter(this=exp.var("FORMAT"), expression=exp.var("CSV")),
                exp.CopyParameter(this=exp.var("HEADER"), expression=exp.Boolean(this=True)),
                exp.CopyParameter(this=exp.var("DELIMITER"), expression=exp.Literal.string(delimiter)),
            ]
        return exp.Copy(this=exp.Subquery(this=query), kind=False, files=[exp.Literal.string(path)], params=params)
