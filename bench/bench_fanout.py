"""Fan-out: does publish() take as long as the slowest announcer, or as long as all of them?

Run: uv run --frozen python bench/bench_fanout.py

Four announcers that each take 50 ms (time.sleep) against one such announcer. publish() wall time
for four as a ratio to one; the target is 1.3 or less (concurrent), where one-after-another would be
about 4. Prints PASS or MISS against the target and exits 0 either way: a figure, not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence

from agent_wait import BaseAnnounce, Question, Transition, WaitEnvelope, publish

DELAY = 0.050
FANOUT = 4
RUNS = 15
TARGET = 1.3


class SleepAnnounce(BaseAnnounce):
    """Stands in for a backend call that takes DELAY seconds (an HTTP POST, an SNS publish)."""

    name = "sleep"

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        time.sleep(DELAY)


def wall(envelope: WaitEnvelope, announcers: Sequence[BaseAnnounce]) -> float:
    started = time.perf_counter()
    report = publish(envelope, announcers)
    elapsed = time.perf_counter() - started
    if len(report.delivered) != len(announcers):
        raise RuntimeError(f"expected every announcer to deliver, got {report.deliveries!r}")
    return elapsed


def main() -> int:
    envelope = WaitEnvelope.create(Question("bench-thread", "bench-q", {"function": "f", "args": {}}))
    one = [SleepAnnounce()]
    four = [SleepAnnounce() for _ in range(FANOUT)]
    wall(envelope, four)  # warm up the thread machinery once
    singles, fans = [], []
    for _ in range(RUNS):  # interleaved, so both see the same machine
        singles.append(wall(envelope, one))
        fans.append(wall(envelope, four))
    single, fan = statistics.median(singles), statistics.median(fans)
    ratio = fan / single
    verdict = "PASS" if ratio <= TARGET else "MISS"
    print(f"{FANOUT} announcers x {DELAY * 1000:.0f} ms each, median of {RUNS} runs")
    print(f"  one announcer     {single * 1000:7.2f} ms")
    print(f"  {FANOUT} announcers     {fan * 1000:7.2f} ms   (sequential would be ~{FANOUT * DELAY * 1000:.0f} ms)")
    print(f"  ratio {ratio:.3f} (target <= {TARGET}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
