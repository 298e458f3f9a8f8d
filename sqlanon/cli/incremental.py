"""What ``sqlanon anonymize --like-release`` prints, and the lineage column of ``sqlanon releases``.

>>> lineage_line({"parent_id": None})
''
>>> lineage_line({"parent_id": 1, "lineage_root": 1, "batch_fingerprint": "n10-ab", "lineage": {"strategy": "hold", "held_rows": 2, "lineage_meets_k": True}})
'  like=1 lineage=1 batch=n10-ab hold held=2 meets_k=True'
"""

from __future__ import annotations


def lineage_line(release: dict) -> str:
    """A batch release's lineage on its ``sqlanon releases`` line (nothing for other releases)."""
    if release.get("parent_id") is None:
        return ""
    info = release.get("lineage") or {}
    held = f" held={info.get('held_rows')}" if info.get("strategy") == "hold" else ""
    batch = release["batch_fingerprint"] or "none"  # a dbt incremental run that found no new rows
    watermark = f" through={release['watermark']['through']}" if release.get("watermark") else ""
    return f"  like={release['parent_id']} lineage={release['lineage_root']} batch={batch}{watermark} {info.get('strategy')}{held} meets_k={info.get('lineage_meets_k')}"


def incremental_summary(result: dict) -> str:
    """The human summary of a batch release."""
    inc = result["incremental"]
    lines = [
        f"like release   {inc['like_release']} (lineage of release {inc['lineage_root']}, k={result['k']} over {'the lineage' if inc['check'] == 'cumulative' else 'each batch'})",
        "transformation " + ", ".join(f"{c}={v}" for c, v in result["transformation"].items()),
        f"batch          {inc['batch_rows']:,} rows" + (f" (+{inc['held_before']:,} held)" if inc["held_before"] else "") + f", {inc['released_rows']:,} released"
        + (f" ({inc['released_from_held']:,} of them held before)" if inc["released_from_held"] else ""),
        f"not released   {inc['suppressed_rows']:,} suppressed, {inc['held_rows']:,} held ({inc['unseen_rows']:,} with unseen values), strategy {inc['strategy']}",
        f"lineage        {inc['lineage_classes']} classes, smallest {inc['lineage_min_class']}: " + ("meets k" if inc["lineage_meets_k"] else "DOES NOT meet k"),
    ]
    dry = result.get("dry_run")
    lines.append(f"output         (dry run: nothing written; would write {dry['would_write']})" if dry else f"output         {result['output']} (release {result['release_id']})")
    return "\n".join(lines)
