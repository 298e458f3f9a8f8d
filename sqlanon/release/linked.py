"""Linked columns: a column that is a function of a quasi-identifier (zip -> city -> state, an
ICD-10 code -> its chapter, a date of birth -> its year).

Released in clear, such a column re-identifies what the QI's generalization hid: a release
k-anonymous over ``(zip, dob, sex)`` with ``zip`` cut to ``012**`` is not k-anonymous over
``(zip, city, dob, sex)`` when ``city`` is left as it is. So:

* **found by SQL** (:func:`dependencies`): for pairs ``(key, column)`` one statement over the table
  counts the distinct ``key`` values and the distinct ``(key, column)`` pairs, each as the number
  of groups of a ``GROUPING SETS`` aggregate (a NULL is a value, as in any ``GROUP BY``): the
  column is a function of the key exactly when the two counts are equal. The share of key values
  with more than one value of the column (at most ``(pairs - keys) / keys``) says how near a
  dependency that is not exact comes;
* **declared** in a policy as ``linked: {city: zip, state: zip}`` (``--linked city=zip``);
* **released consistently** (:func:`linked_select`): a linked column keeps its value in a row
  exactly where the QI's *released* value determines it (every released row with that QI value
  has the same value of the column, a NULL counting as a value); elsewhere, in suppressed rows and
  where the QI is released as ``*`` it is ``*``. Within a class (equal released QIs) a linked
  column is then one value, so the classes over the QIs *and* the linked columns are the classes
  over the QIs: k-anonymity (and every model over classes) holds over both. A linked column that
  needs no ``*`` (every released value of its QI determines it, no row masked) is released as it
  is, in its own type; else as text;
* **refused in clear** (:func:`refuse_linked_in_clear`): a column released as it is (not a QI,
  not dropped, not linked, not the sensitive attribute) that is a function of a QI stops the run
  before the scan with one line naming it and the QI, unless kept knowingly (``keep_linked``,
  ``--keep-linked COLUMN``).

>>> from sqlglot import exp
>>> q = dependency_query(exp.to_table("t"), [("zip", "city")])
>>> print(q.sql("duckdb"))  # doctest: +NORMALIZE_WHITESPACE
SELECT "g", COUNT(*) FROM (SELECT GROUPING("zip") * 2 + GROUPING("city") AS "g" FROM t
GROUP BY GROUPING SETS (("zip"), ("zip", "city"))) AS "d" GROUP BY "g"
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import add_all, as_varchar, col, lit, literal, table_ref

#: columns one dependency statement groups by at most (``GROUPING`` bits of one BIGINT)
MAX_COLUMNS = 60
#: tables smaller than this are not checked: in a few rows any column may follow any other
MIN_ROWS = 100
#: a key must repeat: at least this many rows share their key's value with an earlier row (a
#: key unique per row determines every column, and that links nothing; with 20 repeats a column
#: of two random values follows the key by chance once in a million)
MIN_REPEATS = 20
#: the share of a key's values with more than one value of a column below which the column is
#: said to nearly follow the key (the profile reports it; it is not linked)
NEAR_SHARE = 0.02
#: the released value of a linked column its QI's released value does not determine
MASKED = "*"


@dataclass(frozen=True)
class Dependency:
    """What :func:`dependencies` counted of one ``(key, column)`` pair."""

    key: str
    column: str
    keys: int  # distinct key values (NULL one of them)
    pairs: int  # distinct (key, column) pairs

    @property
    def exact(self) -> bool:
        """The column is a function of the key."""
        return self.pairs == self.keys

    @property
    def broken_share(self) -> float:
        """At most this share of the key's values have more than one value of the column."""
        return (self.pairs - self.keys) / self.keys if self.keys else 0.0


def _sets(pairs: list[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The grouping sets: each key alone, and each pair (each set of columns once: ``(a, b)`` and
    ``(b, a)`` are one grouping, with one ``GROUPING`` id)."""
    out: list[tuple[str, ...]] = []
    for key, column in pairs:
        for s in ((key,), (key, column)):
            if not any(set(s) == set(t) for t in out):
                out.append(s)
    return out


def _columns(sets: list[tuple[str, ...]]) -> list[str]:
    return list(dict.fromkeys(c for s in sets for c in s))


def _gid(columns: list[str], grouped: tuple[str, ...]) -> int:
    """``GROUPING(c1) * 2^(n-1) + ..``: a bit set for each column the set does not group by."""
    n = len(columns)
    return sum(1 << (n - 1 - i) for i, c in enumerate(columns) if c not in grouped)


def dependency_query(item: exp.Expr, pairs: list[tuple[str, str]]) -> exp.Select:
    """One statement: per grouping set (a key; a key and a column) its id and number of groups."""
    sets = _sets(pairs)
    columns = _columns(sets)
    n = len(columns)
    terms: list[exp.Expr] = []
    for i, c in enumerate(columns):
        bit = exp.Grouping(expressions=[col(c)])
        terms.append(exp.Mul(this=bit, expression=literal(1 << (n - 1 - i))) if i < n - 1 else bit)
    tuples = [exp.Tuple(expressions=[col(c) for c in s]) if len(s) > 1 else exp.Paren(this=col(s[0])) for s in sets]
    inner = exp.select(exp.alias_(add_all(terms), "g", quoted=True)).from_(item.copy())
    inner.set("group", exp.Group(expressions=[exp.GroupingSets(expressions=tuples)]))
    sub = exp.alias_(exp.Subquery(this=inner), "d", table=True, quoted=True)
    return exp.select(col("g"), exp.Count(this=exp.Star())).from_(sub).group_by(col("g"))


def _chunks(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Pairs in statements of at most :data:`MAX_COLUMNS` columns each."""
    chunks: list[list[tuple[str, str]]] = [[]]
    for pair in pairs:
        if len(_columns(_sets([*chunks[-1], pair]))) > MAX_COLUMNS:
            chunks.append([])
        chunks[-1].append(pair)
    return [c for c in chunks if c]


def dependencies(engine, item: exp.Expr, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], Dependency]:
    """``(key, column) -> Dependency`` for every pair, over the FROM ``item`` (one statement per
    :data:`MAX_COLUMNS` columns; only group counts come back)."""
    out: dict[tuple[str, str], Dependency] = {}
    for chunk in _chunks([p for p in dict.fromkeys(pairs) if p[0] != p[1]]):
        sets = _sets(chunk)
        columns = _columns(sets)
        counts = {int(g): int(n) for g, n in engine.fetch_all(dependency_query(item, chunk))}
        for key, column in chunk:
            keys = counts.get(_gid(columns, (key,)), 0)
            out[(key, column)] = Dependency(key, column, keys, counts.get(_gid(columns, (key, column)), 0))
    return out


def linking(d: Dependency, rows: int) -> bool:
    """An exact dependency that says something: the key repeats (:data:`MIN_REPEATS`, counted
    exactly now; the column has two values at least: :func:`plausible_pairs`)."""
    return d.exact and rows >= MIN_ROWS and rows - d.keys >= MIN_REPEATS


def distinct_counts(engine, item: exp.Expr, columns: list[str]) -> tuple[int, dict[str, int]]:
    """``(rows, about how many distinct values per column)``: one pass of HyperLogLog sketches."""
    q = exp.select(exp.Count(this=exp.Star()), *[engine.dialect.approx_distinct(col(c)) for c in columns]).from_(item.copy())
    row = engine.fetch_one(q) or (0,)
    return int(row[0] or 0), {c: int(n or 0) for c, n in zip(columns, row[1:])}


def plausible_pairs(rows: int, counts: dict[str, int], keys: list[str], columns: list[str]) -> list[tuple[str, str]]:
    """The ``(key, column)`` pairs worth counting: the table is large enough (:data:`MIN_ROWS`),
    the key repeats (:data:`MIN_REPEATS`), the column has two values or more and not many more
    than the key (a function of it has at most as many; the counts are estimates).

    >>> plausible_pairs(1000, {"zip": 300, "city": 80, "id": 990, "one": 1}, ["zip", "id"], ["city", "one"])
    [('zip', 'city')]
    """
    if rows < MIN_ROWS:
        return []
    out = []
    for key in keys:
        if rows - counts[key] < MIN_REPEATS:
            continue
        out += [(key, c) for c in columns if c != key and counts[c] >= 2 and counts[c] <= 1.05 * counts[key] + 1]
    return out


# ------------------------------------------------------------------------------------------------
# the policy's links, checked against the input


def check_links(linked: dict[str, str], keep_linked: list[str], qis, columns: list[str], dropped, sensitive: str | None, micro) -> None:
    """``linked`` maps columns of the input that are not QIs (nor dropped, microaggregated, kept
    or the sensitive attribute) to QIs; ``keep_linked`` names columns of the input. A one-line
    ConfigError names the culprit."""
    for name in [*linked, *keep_linked]:
        if name not in columns:
            raise ConfigError(f"unknown column {name!r} in --linked/--keep-linked; columns are: {', '.join(columns)}")
    for name, qi in linked.items():
        if qi not in qis:
            raise ConfigError(f"--linked {name}={qi}: {qi!r} is not a quasi-identifier (a linked column follows a QI given with --qi)")
        clash = ("a quasi-identifier" if name in qis else "dropped (--drop-column)" if name in dropped else "microaggregated" if name in (micro or {})
                 else "kept as it is (--keep-linked)" if name in keep_linked else "the sensitive column" if name == sensitive else None)
        if clash:
            raise ConfigError(f"--linked {name}={qi}: {name!r} is also {clash}; a linked column is released by its QI's released value")


def refuse_linked_in_clear(engine, source, qis, linked: dict[str, str], keep_linked=(), dropped=(), sensitive: str | None = None, micro=None) -> None:
    """Refuse, before the scan, a column released as it is that is a function of a QI (see the
    module's docstring): one line naming the column and the QI, with the ways out."""
    skip = set(qis) | set(linked) | set(keep_linked or ()) | set(dropped or ()) | set(micro or {}) | ({sensitive} if sensitive else set())
    clear = [c for c in source.column_names(engine) if c not in skip]
    if not clear or not qis:
        return
    item = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    rows, counts = distinct_counts(engine, item, [*qis, *clear])
    found = [d for d in dependencies(engine, item, plausible_pairs(rows, counts, list(qis), clear)).values() if linking(d, rows)]
    if not found:
        return
    d = found[0]
    raise ConfigError(
        f"column {d.column!r} is a function of the quasi-identifier {d.key!r} ({d.keys:,} values of {d.key} each with one {d.column}): released as it is, "
        f"it re-identifies what {d.key}'s generalization hides; release it by {d.key} (--linked {d.column}={d.key}), make it a QI, "
        f"drop it (--drop-column {d.column}), or keep it knowingly (--keep-linked {d.column})"
    )


# ------------------------------------------------------------------------------------------------
# the release


def _determined(column: str) -> exp.Expr:
    """1 where every row of a group has the same value of ``column`` (all NULL counts as one)."""
    c = col(column, "r")
    one = exp.and_(exp.EQ(this=exp.Count(this=exp.Distinct(expressions=[c.copy()])), expression=literal(1)), exp.EQ(this=exp.Count(this=c.copy()), expression=exp.Count(this=exp.Star())))
    none = exp.EQ(this=exp.Count(this=c.copy()), expression=literal(0))
    return exp.Case().when(exp.or_(one, none), literal(1)).else_(literal(0))


def determined_query(release: exp.Query, qi: str, columns: list[str]) -> exp.Select:
    """Per released value of ``qi`` in ``release``: ``q`` and, per linked column, 1 where that
    value determines it (``f0``, ``f1``, ..); ``*`` (masked) determines nothing."""
    r = exp.alias_(exp.Subquery(this=release.copy()), "r", table=True, quoted=True)
    value = as_varchar(col(qi, "r"))
    masked = exp.EQ(this=value.copy(), expression=lit(MASKED))
    flags = [exp.alias_(exp.Case().when(masked.copy(), literal(0)).else_(_determined(c)), f"f{j}", quoted=True) for j, c in enumerate(columns)]
    return exp.select(exp.alias_(value, "q", quoted=True), *flags).from_(r).group_by(value.copy())


def undetermined_query(name: str, columns: list[str]) -> exp.Select:
    """Per linked column of one QI's table ``name`` (:func:`determined_query`): the smallest flag
    (1: every released value determines it, so no row needs ``*``; NULL: no rows)."""
    return exp.select(*[exp.Min(this=col(f"f{j}")) for j in range(len(columns))]).from_(table_ref(name))


def by_qi(linked: dict[str, str]) -> dict[str, list[str]]:
    """QI -> its linked columns (in the policy's order)."""
    out: dict[str, list[str]] = {}
    for column, qi in linked.items():
        out.setdefault(qi, []).append(column)
    return out


def linked_statements(release: exp.Query, linked: dict[str, str], names: list[str], as_is=frozenset()) -> tuple[list[tuple[str, str, exp.Select]], exp.Select]:
    """``([(qi, table name, its query)], final select)``: the small tables (one per QI with linked
    columns, named by ``names``) and the release reading them (see :func:`linked_select`); the
    linked columns in ``as_is`` need no ``*`` and are released as they are (their type kept)."""
    groups = by_qi(linked)
    tables: dict[str, tuple[str, str]] = {}
    creates = []
    for i, (qi, columns) in enumerate(groups.items()):
        creates.append((qi, names[i], determined_query(release, qi, columns)))
        tables[qi] = (f"l{i}", names[i])
    q = exp.select().from_(exp.alias_(exp.Subquery(this=release), "r", table=True, quoted=True))
    for qi, (alias, name) in tables.items():
        q = q.join(table_ref(name, alias=alias), on=exp.EQ(this=col("q", alias), expression=as_varchar(col(qi, "r"))), join_type="left")
    for column in release.named_selects:  # a select's, or a union's (rows withheld for NULLs)
        of = linked.get(column)
        if of is None or column in as_is:
            q = q.select(col(column, "r"))
            continue
        flag = col(f"f{groups[of].index(column)}", tables[of][0])
        value = exp.Case().when(exp.EQ(this=flag, expression=literal(1)), as_varchar(col(column, "r"))).else_(lit(MASKED))
        q = q.select(exp.alias_(value, column, quoted=True))
    return creates, q


def linked_select(engine, release: exp.Query, linked: dict[str, str]) -> exp.Query:
    """The release with each linked column kept where its QI's released value determines it and
    ``*`` elsewhere (see the module's docstring); registers one small table per QI (one row per
    released value) on the engine. Without links, ``release`` as it is."""
    if not linked:
        return release
    groups = by_qi(linked)
    names = [engine.temp_name(f"linked{i}") for i in range(len(groups))]
    creates, final = linked_statements(release, linked, names)
    as_is: set[str] = set()
    for qi, name, query in creates:
        engine.execute(engine.dialect.create_temp(name, query))
        smallest = engine.fetch_one(undetermined_query(name, groups[qi])) or ()
        as_is |= {c for c, least in zip(groups[qi], smallest) if least is not None and int(least) == 1}
    if as_is:
        _, final = linked_statements(release, linked, names, frozenset(as_is))
    return final
