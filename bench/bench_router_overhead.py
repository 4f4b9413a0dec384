"""Router overhead: handling an answer end to end, as a ratio to a bare LangGraph resume of the same graph.

Run: uv run --frozen python bench/bench_router_overhead.py

In-memory backends throughout (InMemorySaver, InMemoryLedger, InMemoryDeadLetter, one InMemoryAnnounce),
so the figure is the router's own work: parse and check the answer, the ledger's conditional decide,
`wait.answered`, confirm the graph is still parked (`get_state`), resume, record what it asks next,
`mark_resumed` and `wait.resumed`. The bare side is `graph.invoke(Command(resume={question_id: answer}))`
on the same graph, once with LangGraph's default durability ("async") and once with "sync" (what the
router's LangGraphAdapter uses). Threads are parked beforehand, outside the timing; the three sides are
interleaved round by round so machine noise hits each alike. Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agent_wait import InMemoryAnnounce
from agent_wait.engine import InMemoryDeadLetter, Router
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

ROUNDS = 300
WARMUP = 20
APPROVE = {"action": "approve"}


def _graph() -> Any:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _refund_stack import build_graph

    return build_graph(InMemorySaver())


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def main() -> int:
    graph = _graph()
    router = Router(
        LangGraphAdapter(graph), InMemoryLedger(), dead_letter=InMemoryDeadLetter(), announce=InMemoryAnnounce()
    )
    total = ROUNDS + WARMUP

    # Park every thread first: the router's through the router (so its ledger knows the question),
    # the bare ones with a bare invoke.
    routed: list[str] = []
    for n in range(total):
        outcome = router.handle(json.dumps({"thread_id": f"r-{n}", "input": {"order_id": f"o-{n}", "amount": 900}}))
        (question_id,) = outcome.asked
        routed.append(json.dumps({"thread_id": f"r-{n}", "question_id": question_id, "answer": APPROVE}))
    bare: dict[str, list[tuple[str, str]]] = {"async": [], "sync": []}
    for durability, threads in bare.items():
        for n in range(total):
            thread_id = f"{durability}-{n}"
            result = graph.invoke({"order_id": f"o-{n}", "amount": 900}, _config(thread_id))
            threads.append((thread_id, result["__interrupt__"][0].id))

    def router_answer(n: int) -> None:
        router.handle(routed[n])

    def bare_resume(durability: str) -> Callable[[int], None]:
        def resume(n: int) -> None:
            thread_id, question_id = bare[durability][n]
            graph.invoke(Command(resume={question_id: APPROVE}), _config(thread_id), durability=durability)  # type: ignore[arg-type]

        return resume

    sides: dict[str, Callable[[int], None]] = {
        "router.handle(answer)": router_answer,
        "bare invoke(Command(resume)) durability=async": bare_resume("async"),
        "bare invoke(Command(resume)) durability=sync": bare_resume("sync"),
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for n in range(total):
        order = names if n % 2 == 0 else names[::-1]
        for name in order:
            started = time.perf_counter()
            sides[name](n)
            elapsed = time.perf_counter() - started
            if n >= WARMUP:
                times[name].append(elapsed)

    baseline = statistics.median(times["bare invoke(Command(resume)) durability=async"])
    print(f"Answer handling, in-memory backends, {ROUNDS} rounds (after {WARMUP} warm-up), medians:")
    print(f"{'side':<48}{'median ms':>11}{'p90 ms':>9}{'x bare':>9}")
    for name in names:
        samples = sorted(times[name])
        median = statistics.median(samples)
        p90 = samples[int(len(samples) * 0.9)]
        print(f"{name:<48}{median * 1000:>11.3f}{p90 * 1000:>9.3f}{median / baseline:>9.2f}")
    sync = statistics.median(times["bare invoke(Command(resume)) durability=sync"])
    ratio = statistics.median(times["router.handle(answer)"]) / sync
    print(f"\nrouter / bare resume with the same durability (sync): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
