"""Thread history: items the router reads from the question table for one lifecycle, by how many turns came before.

Run: uv run --frozen python bench/bench_thread_history.py

On an embedded moto server, the real router (built by `build_router`, as the router Lambda builds it)
runs lifecycles (start → ask → answer → resume) on four threads, with 0, 1, 10 and 100 earlier lifecycles,
side by side in one run; botocore hooks count the items each GetItem and Query on the question table
returned during the measured lifecycle. Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _refund_stack import REGION, moto_stack
from _targets import Target, report_targets

DEPTHS = (0, 1, 10, 100)


def main() -> int:
    with moto_stack(prefix="history") as stack:
        import boto3

        from agent_wait.host import HostSettings, build_router

        session = boto3.Session(region_name=REGION)
        read: list[tuple[str, int]] = []

        def count(model: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            if context.get("table") != stack.table:
                return
            if model.name == "GetItem":
                read.append(("GetItem", 1 if parsed.get("Item") else 0))
            elif model.name == "Query":
                read.append(("Query", len(parsed.get("Items", []))))

        def remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            context["table"] = params.get("TableName")

        session.events.register("before-parameter-build.dynamodb", remember)
        session.events.register("after-call.dynamodb", count)
        router = build_router(HostSettings.from_env("router"), session=session)

        def lifecycle(thread_id: str, turn: int) -> None:
            start = {"thread_id": thread_id, "input": {"order_id": f"{thread_id}-{turn}", "amount": 900}}
            (question_id,) = router.handle(json.dumps({**start, "start_id": f"{thread_id}-s{turn}"})).asked
            answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
            router.handle(json.dumps({**answer, "answer_id": f"{thread_id}-a{turn}"}))

        def measured(work: Callable[[], None]) -> tuple[int, int, int]:
            read.clear()
            work()
            items = sum(n for _, n in read)
            return items, sum(1 for op, _ in read if op == "GetItem"), sum(1 for op, _ in read if op == "Query")

        results = []
        for depth in DEPTHS:
            thread = f"thread-{depth}"
            for turn in range(depth):
                lifecycle(thread, turn)
            results.append((depth, *measured(lambda thread=thread, depth=depth: lifecycle(thread, depth))))

    print("Question-table items the router read for one lifecycle, by earlier lifecycles on the same thread")
    print(f"{'earlier turns':>14}{'items read':>12}{'GetItem calls':>15}{'Query calls':>13}")
    for depth, items, gets, queries in results:
        print(f"{depth:>14}{items:>12}{gets:>15}{queries:>13}")
    new_thread = next(items for depth, items, _, _ in results if depth == 0)
    longest = results[-1]
    report_targets(
        [
            Target(
                f"question-table items read per lifecycle, {longest[0]} earlier turns (target: a new thread's)",
                "205",
                longest[1],
                new_thread,
            )
        ]
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
