"""The profile's linked columns: columns that are functions of a quasi-identifier (zip -> city ->
state, a date of birth -> its year), found by SQL (:func:`sqlanon.release.linked.dependencies`:
one ``GROUPING SETS`` statement over the rows the profile reads; a NULL is a value), declared in
the written policy as ``linked: {city: zip}``, and used as the levels of one hierarchy of their QI.

Each column is linked to the finest QI (most values) it follows; a QI that follows another is
linked to it too (it is no quasi-identifier of its own then). A column that follows a QI in all but
a few of its values (at most :data:`~sqlanon.release.linked.NEAR_SHARE`) is reported, not linked.

The hierarchy (:func:`linked_proposal`, for codes and categories; dates and numbers keep theirs):
the candidate levels are the linked columns and, for codes, the masked prefixes (``012**``); the
levels are the longest chain of them each a function of the one before with fewer values
(preferring chains through more linked columns), e.g. ``zip -> 012** -> state -> *``. Two linked
columns neither of which follows the other (a city name found in two states) also give the pair as a
candidate level (``city, state``: ``Springfield, IL``), which the coarser one follows, so the chain
can keep both: ``zip -> city, state -> state -> *`` (:func:`pairs`). The
rows (one per distinct QI value) are read by SQL over the whole table and written as a hierarchy
file beside the policy.

>>> chain({"city": ["a", "b", "c", "c"], "state": ["X", "X", "Y", "Y"], "zip3": ["01*", "02*", "02*", "02*"]}, {"city", "state"})
['city', 'state']
>>> levels = {"city": ["Springfield", "Springfield", "Springfield", "Oakton", "Elm"],
...           "state": ["IL", "IL", "MA", "MA", "MA"]}
>>> pairs(levels, ["city", "state"])["city, state"][1:4]
['Springfield, IL', 'Springfield, MA', 'Oakton, MA']
>>> chain({**levels, **pairs(levels, ["city", "state"])}, {"city", "state", "city, state"})
['city, state', 'state']
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import col
from sqlanon.profiling.proposals import MAX_FILE_VALUES, Proposal
from sqlanon.profiling.scan import ColumnStats, as_text
from sqlanon.release.linked import MIN_REPEATS, NEAR_SHARE, dependencies, linking, plausible_pairs

#: roles whose columns may follow a quasi-identifier (a direct identifier is dropped anyway)
FOLLOWER_ROLES = ("qi", "sensitive", "insensitive")
#: the label of a NULL value of a linked column in a hierarchy level (cells may not be empty)
MISSING = "(missing)"
#: hierarchies of these proposal kinds take linked levels (dates and bands keep their own)
LINKABLE = ("mask", "frequency", "flat")


def find_links(engine, item: exp.Expr, stats: list[ColumnStats], roles: dict) -> tuple[dict[str, str], list[dict]]:
    """``({column: qi}, near)``: the exact links, and the near ones (``column``, ``of``,
    ``share`` of the QI's values with more than one value of the column), over ``item``."""
    rows = stats[0].rows if stats else 0
    counts = {s.name: s.distinct + (1 if s.nulls else 0) for s in stats}
    keys = sorted((s.name for s in stats if roles[s.name].role == "qi"), key=lambda n: -counts[n])
    followers = [s.name for s in stats if roles[s.name].role in FOLLOWER_ROLES]
    found = dependencies(engine, item, plausible_pairs(rows, counts, keys, followers))
    links: dict[str, str] = {}
    for key in keys:
        if key in links:
            continue
        for column in followers:
            d = found.get((key, column))
            if d is not None and column not in links and column not in links.values() and linking(d, rows):
                links[column] = key
    near = [{"column": d.column, "of": d.key, "share": round(d.broken_share, 4)} for d in found.values()
            if d.column not in links and not d.exact and d.broken_share <= NEAR_SHARE and rows - d.keys >= MIN_REPEATS]
    return links, near


def _masks(qi: str, leaves: list[str]) -> dict[str, list[str]]:
    """The masked prefixes of codes as candidate levels (``zip masked 1`` hides the last character..)."""
    width = max((len(v) for v in leaves), default=0)
    out = {}
    for i in range(1, min(width, 33)):
        out[f"{qi} masked {i}"] = [v[: max(len(v) - i, 0)] + "*" * (len(v) - max(len(v) - i, 0)) for v in leaves]
    return out


def pairs(levels: dict[str, list[str]], columns: list[str]) -> dict[str, list[str]]:
    """The pair of two linked ``columns`` as a candidate level (``"city, state"``), where neither
    column follows the other: each then follows the pair, which keeps the chain through both."""
    out = {}
    for i, a in enumerate(columns):
        for b in columns[i + 1:]:
            if not _follows(levels[a], levels[b]) and not _follows(levels[b], levels[a]):
                out[f"{a}, {b}"] = [f"{x}, {y}" for x, y in zip(levels[a], levels[b])]
    return out


def _follows(a: list[str], b: list[str]) -> bool:
    seen: dict[str, str] = {}
    return all(seen.setdefault(x, y) == y for x, y in zip(a, b))


def chain(levels: dict[str, list[str]], linked: set[str]) -> list[str]:
    """The longest chain of candidate ``levels`` (values per leaf), each a function of the one
    before with fewer values, preferring chains through more ``linked`` columns, then longer ones,
    then the one whose last level has fewer values (the steps to ``*`` more even)."""
    sizes = {n: len(set(v)) for n, v in levels.items()}
    names = sorted((n for n in levels if sizes[n] >= 2), key=lambda n: (-sizes[n], n))
    best: dict[str, tuple[int, int, int, list[str]]] = {}
    for n in reversed(names):
        options = [best[m] for m in names if sizes[m] < sizes[n] and m in best and _follows(levels[n], levels[m])]
        top = max(options, key=lambda o: o[:3], default=(0, 0, -sizes[n], []))
        best[n] = (top[0] + (n in linked), top[1] + 1, top[2], [n, *top[3]])
    return max(best.values(), key=lambda o: o[:3])[3] if best else []


def leaf_rows(engine, source, qi: str, columns: list[str]) -> list[tuple]:
    """``(qi value, column values..)`` per distinct (non-NULL) value of ``qi``, as text, over the
    whole table (more rows than values: a column does not follow ``qi`` in the whole table)."""
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    q = (exp.select(*[as_text(col(c, "src")) for c in [qi, *columns]]).distinct().from_(src)
         .where(exp.Not(this=exp.Is(this=col(qi, "src"), expression=exp.Null()))))
    return engine.fetch_all(q)


def linked_proposal(engine, source, qi: ColumnStats, base: Proposal, columns: list[str]) -> Proposal:
    """The hierarchy of ``qi`` with its linked ``columns`` as levels (see the module's
    docstring), or ``base`` where none fits (dates, bands; too many values; no chain)."""
    if base.kind not in LINKABLE or not columns or qi.distinct > MAX_FILE_VALUES:
        return base
    found = leaf_rows(engine, source, qi.name, columns)
    leaves = [str(r[0]) for r in found]
    if len(set(leaves)) != len(leaves):
        return base
    levels = {c: [MISSING if r[j + 1] is None else str(r[j + 1]) for r in found] for j, c in enumerate(columns)}
    together = pairs(levels, columns)
    levels.update(together)
    if base.kind == "mask":
        levels.update(_masks(qi.name, leaves))
    picked = [n for n in chain(levels, {*columns, *together}) if len(set(levels[n])) < len(leaves)]
    if not any(n in columns or n in together for n in picked):
        return base
    rows = sorted([leaf, *[levels[n][i] for n in picked], "*"] for i, leaf in enumerate(leaves))
    shown = " -> ".join([qi.name, *[f"{n} ({len(set(levels[n])):,} values)" for n in picked], "*"])
    return Proposal("linked", "", f"levels from the columns that follow it: {shown}", len(picked) + 2, rows=rows)
