"""Lifecycles of the 3-branch parallel graph through the real router on moto: refused answers, re-run branches, and
AWS calls, write and read units per lifecycle (issue 27: 0 refused and 0 re-run over >= 200 lifecycles).

Run: uv run --frozen python bench/bench_parallel_graph.py [--lifecycles 200]

The graph is `tests.agents.branch_graphs:build_three_branch_graph` (START → prep → {a, b, c} → join → END, `b`
asks), the one `tests/langgraph/saver/test_parallel_branches.py` drives. Each lifecycle is a start and its answer,
each sent to the entry queue, received and deleted as Lambda's event source does (`bench_lifecycle_calls.deliver`),
on a new thread. An answer counts as refused when its outcome is not `applied`; a lifecycle counts as re-running a
branch when any node ran more often than once (`b` twice: up to its question, then with the answer). Calls and
capacity units are counted as `bench_lifecycle_calls.py` counts them. Figures, not a test: it exits 0 either way.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = "tests.agents.branch_graphs:build_three_branch_graph"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=200)
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))  # the repository: `tests.agents.branch_graphs`, as the router names it
    from _refund_stack import REGION, CallCounter, asked_question, deliver, moto_stack
    from _targets import Target, report_targets

    with moto_stack("parallel") as stack:
        import boto3
        from tests.agents import branch_graphs

        from agent_wait.contract.schema import QUESTION_TABLE, Settings
        from agent_wait.engine import OutcomeKind
        from agent_wait.host import HostSettings, build_router

        os.environ[Settings.GRAPH.value] = GRAPH
        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        session = boto3.Session(region_name=REGION)
        counter.register(session)
        router = build_router(HostSettings.from_env("router"), session=session)
        sqs = session.client("sqs")
        refused: Counter[str] = Counter()
        ran_again = 0
        per_lifecycle: list[tuple[int, float, float]] = []
        for n in range(args.lifecycles + 1):  # the first warms the graph, clients and connections; not counted
            thread_id = f"parallel-{n}"
            begin = counter.mark()
            deliver(sqs, stack, router, {"thread_id": thread_id, "input": {"log": []}}, thread_id)
            question = asked_question(reader, stack, thread_id)
            outcome = _answer(sqs, stack, router, thread_id, question)
            if n == 0:
                continue
            calls = counter.calls[begin:]
            per_lifecycle.append((len(calls), sum(c.wru for c in calls), sum(c.rru for c in calls)))
            if outcome.kind != OutcomeKind.APPLIED:
                refused[f"{outcome.kind}:{outcome.reason}"] += 1
            runs = branch_graphs.runs(thread_id)
            if any(count != (2 if node == "b" else 1) for node, count in runs.items()):
                ran_again += 1

    lifecycles = len(per_lifecycle)
    calls, wru, rru = (sum(row[i] for row in per_lifecycle) / lifecycles for i in range(3))
    print(f"{GRAPH}: {lifecycles} lifecycles (start → b asks while a and c run → answer → resume) on moto")
    print(f"refused answers: {sum(refused.values())} {dict(refused) or ''}")
    print(f"lifecycles that ran a finished branch again: {ran_again}")
    print(f"per lifecycle: {calls:.1f} calls, {wru:.1f} WRU, {rru:.1f} RRU (mean; seen {_spread(per_lifecycle)})")
    report_targets(
        [
            Target(
                "parallel graph: lifecycles driven through the router", "40", lifecycles, 200, lower_is_better=False
            ),
            Target("parallel graph: valid answers refused", "5-6 in 40", sum(refused.values()), 0),
            Target("parallel graph: lifecycles that ran a finished branch again", "5-7 in 40", ran_again, 0),
        ]
    )
    return 0


def _answer(sqs: Any, stack: Any, router: Any, thread_id: str, question_id: str) -> Any:
    """Deliver the answer as the event source does, and keep the router's outcome."""
    from _refund_stack import deliver

    outcomes: list[Any] = []

    class Keeping:
        def handle(self, *args: Any, **kwargs: Any) -> Any:
            outcomes.append(router.handle(*args, **kwargs))
            return outcomes[-1]

    answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
    deliver(sqs, stack, Keeping(), answer, thread_id)
    return outcomes[0]


def _spread(rows: list[tuple[int, float, float]]) -> str:
    calls = sorted({row[0] for row in rows})
    wru = sorted({row[1] for row in rows})
    return f"calls {calls[0]}-{calls[-1]}, WRU {wru[0]:g}-{wru[-1]:g}"


if __name__ == "__main__":
    raise SystemExit(main())
