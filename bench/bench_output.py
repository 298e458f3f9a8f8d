"""The end every bench's output shares: the closing load average, printed, and the lines written
to ``--out`` when given."""

from __future__ import annotations

import os


def finish(lines: list[str], out: str | None) -> None:
    """Append and print the load average at the end; write ``lines`` to ``out`` if set."""
    lines.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(lines[-1])
    if out:
        with open(out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
