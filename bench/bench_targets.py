"""Every row of issues 17, 27 and 46's target tables, measured now: each bench that measures a row runs in a process of
its own, and their rows are printed together with the figure the issue found and PASS or MISS.

Run: uv run --frozen python bench/bench_targets.py [--show]

`--show` prints each bench's own output too (its tables and assumptions); without it only the rows are
printed. A bench that fails is named and its rows are missing: the script then exits 1. Figures, not a
test: a MISS does not fail it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _targets import TABLES_FILE, TARGETS_FILE, Target, print_table, read

BENCHES = (
    "bench_lifecycle_calls.py",  # the refund stack as synthesized, per door: calls, WRU, RRU, log bytes, $
    "bench_sweep.py",  # sweep reads with 10k and 100k open and nothing due, and with 10 and 100 due
    "bench_cold_start.py",  # bundle size, cold start to ready vs a bare LangGraph Lambda, the API's cold answer
    "bench_answer_api.py",  # the answer API's POST: AWS calls (and its warm answer by memory size)
    "bench_thread_history.py",  # items read per lifecycle on a thread with 100 earlier turns
    "bench_parallel_graph.py",  # refused answers and re-run branches over 200 lifecycles of the 3-branch graph
    "bench_graphs.py",  # per graph: calls, WRU, RRU, $ per million beside Step Functions
    "bench_retention.py",  # storage at rest per lifecycle under the default retention, $ a month per million
    "bench_grants.py",  # standing grants: nothing new without grants; one Query and one write per use with them
)


STORAGE_WORD = "storage"
"""A row whose figure names storage is what a lifecycle leaves stored (the retention bench's): the per-door table
above it prices what a lifecycle does, so that row is quoted beside it."""


def print_storage(rows: list[Target]) -> None:
    """The storage a lifecycle leaves, from whichever bench reported it, beside the per-door table."""
    stored = [row for row in rows if STORAGE_WORD in row.figure.lower()]
    print("\nPlus storage (what each lifecycle leaves stored, under the retention defaults):")
    if stored:
        print_table(stored)
    else:
        print("  not measured in this run: no bench reported a row naming storage (the retention bench adds it)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print each bench's own output as well")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        rows_file, tables_file = os.path.join(scratch, "rows.jsonl"), os.path.join(scratch, "tables.txt")
        for path in (rows_file, tables_file):
            open(path, "w").close()
        for bench in BENCHES:
            began = time.monotonic()
            run = subprocess.run(
                [sys.executable, os.path.join(here, bench)],
                env={**os.environ, TARGETS_FILE: rows_file, TABLES_FILE: tables_file},
                capture_output=not args.show,
                text=True,
                check=False,
            )
            took = time.monotonic() - began
            print(f"{bench}: {'done' if run.returncode == 0 else f'FAILED (exit {run.returncode})'} in {took:.0f} s")
            if run.returncode != 0:
                failed.append(bench)
                if not args.show:
                    print((run.stderr or run.stdout)[-2000:])
        rows = read(rows_file)
        with open(tables_file, encoding="utf-8") as tables:
            collected = tables.read().rstrip()
    print(f"\nIssues 17, 27 and 46's targets, measured now (Python {sys.version.split()[0]}, {os.cpu_count()} cores):")
    print_table(rows)
    if collected:
        print(f"\n{collected}")
    print_storage(rows)
    if failed:
        print(f"\nno rows from: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
