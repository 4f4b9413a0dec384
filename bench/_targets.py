"""Issue 17's target rows, printed the same way by every bench that measures one, and collected by
`bench_targets.py` (which runs each bench in a process of its own and prints all the rows together).

A bench calls `report_targets([...])` once with the rows it measured. When `BENCH_TARGETS_FILE` names a file, the
rows are also appended to it as JSON lines, which is how `bench_targets.py` collects them.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

TARGETS_FILE = "BENCH_TARGETS_FILE"
TABLES_FILE = "BENCH_TABLES_FILE"


@dataclass(frozen=True)
class Target:
    """One target row (issues 17 and 27): what it measures, the figure before the work, the figure now, the goal."""

    figure: str
    before: str
    now: float
    target: float
    unit: str = ""
    lower_is_better: bool = True
    decimals: int = 0

    @property
    def passed(self) -> bool:
        return self.now <= self.target if self.lower_is_better else self.now >= self.target

    def cells(self) -> tuple[str, str, str, str, str]:
        shape = f"{{:,.{self.decimals}f}}"
        now = shape.format(self.now) + (f" {self.unit}" if self.unit else "")
        sign = "<=" if self.lower_is_better else ">="
        target = f"{sign} {shape.format(self.target)}" + (f" {self.unit}" if self.unit else "")
        return self.figure, self.before, now, target, "PASS" if self.passed else "MISS"


def print_table(rows: list[Target]) -> None:
    header = ("figure", "before", "now", "target", "verdict")
    table = [header, *(row.cells() for row in rows)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(header))]
    for cells in table:
        print(
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            )
        )


def report_targets(rows: list[Target]) -> None:
    """Print `rows` under a heading; append them to `$BENCH_TARGETS_FILE` when it is set."""
    print("\nTargets (issues 17, 27 and 46) this bench measures:")
    print_table(rows)
    path = os.environ.get(TARGETS_FILE)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(asdict(row)) + "\n")


def read(path: str) -> list[Target]:
    with open(path, encoding="utf-8") as rows:
        return [Target(**json.loads(line)) for line in rows if line.strip()]


def report_table(lines: list[str]) -> None:
    """Print a bench's own table; append it to `$BENCH_TABLES_FILE` when set, for `bench_targets.py` to print."""
    print("\n".join(lines))
    path = os.environ.get(TABLES_FILE)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n\n")
