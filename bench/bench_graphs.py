"""A question's lifecycle per graph shape, through the real router on moto: AWS calls, write and read units, and
dollars per million lifecycles beside a Step Functions standard workflow doing the same steps (issue 27's table).

Run: uv run --frozen python bench/bench_graphs.py [--lifecycles 10]

The graphs, each asking one question of `@wait`/`ask` and carrying on once it is approved:

- one node: START → ask → END;
- the refund example as the other benches run it: prepare → review (asks) → finish (`bench_lifecycle_calls`);
- a 10-step linear graph: step1 … step10, step5 asks;
- the 3-branch parallel graph: prep → {a, b, c} → join, b asks (`tests.agents.branch_graphs`).

Each lifecycle is a start and its answer, each sent to the entry queue, received and deleted as Lambda's event
source does (`_refund_stack.deliver`), on a new thread, after one warm lifecycle per graph. Capacity units
and prices are `bench_lifecycle_calls.py`'s (its assumptions hold here); the router's two invocations are billed
as `bench_lifecycle_calls.py` bills the refund example's: at its 320 MB x86, the medians of a worker whose CPU is
capped at that size's share, each AWS call held a modelled round trip (`bench_router_memory.measure`). Step
Functions: one state transition per node, plus the task-token wait and the end state, with the same two Lambda
invocations and one SNS publish. Figures, not a test: it exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
from typing import Annotated, Any, NotRequired, TypedDict

HERE = os.path.dirname(os.path.abspath(__file__))


class Line(TypedDict):
    log: Annotated[list[str], lambda left, right: left + right]
    decision: NotRequired[Any]


def _asks(step: str) -> Any:
    def node(state: Line) -> dict[str, Any]:
        from agent_wait import WaitPolicy
        from agent_wait.langgraph import ask

        decision = ask({"prompt": f"approve {step}?"}, WaitPolicy(timeout="P3D", default={"action": "reject"}))
        return {"log": [step], "decision": decision}

    return node


def _linear(checkpointer: Any, steps: int, asking: int) -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(Line)
    names = [f"step{i}" for i in range(1, steps + 1)]
    for i, name in enumerate(names, start=1):
        builder.add_node(name, _asks(name) if i == asking else (lambda state, name=name: {"log": [name]}))
    builder.add_edge(START, names[0])
    for left, right in itertools.pairwise(names):
        builder.add_edge(left, right)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=checkpointer)


def build_one_node(checkpointer: Any) -> Any:
    """START → step1 (asks) → END."""
    return _linear(checkpointer, 1, 1)


def build_ten_steps(checkpointer: Any) -> Any:
    """step1 … step10, step5 asks."""
    return _linear(checkpointer, 10, 5)


GRAPHS = (
    ("one node", "bench_graphs:build_one_node", {"log": []}, 1),
    ("refund example", "_refund_stack:build_graph", {"order_id": "o-1", "amount": 900}, 3),
    ("10-step linear", "bench_graphs:build_ten_steps", {"log": []}, 10),
    ("3-branch parallel", "tests.agents.branch_graphs:build_three_branch_graph", {"log": []}, 5),
)
"""(name, AGENT_WAIT_GRAPH, the start's input, the graph's nodes: Step Functions' task states)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))  # the repository: `tests.agents.branch_graphs`
    from _targets import report_table

    rows = [_measure(name, graph, value, nodes, args.lifecycles) for name, graph, value, nodes in GRAPHS]
    header = f"{'graph':<20}{'calls':>7}{'WRU':>7}{'RRU':>7}{'router ms':>11}{'$/M agent-wait':>16}{'$/M Step Fns':>14}"
    lines = [
        f"One question's lifecycle per graph, {args.lifecycles} warm lifecycles each, through the router on moto;",
        "router ms: a lifecycle's two invocations billed at 320 MB x86, CPU capped, modelled AWS wait",
        header,
    ]
    for name, calls, wru, rru, router_ms, ours, sfn in rows:
        lines.append(f"{name:<20}{calls:>7.1f}{wru:>7.1f}{rru:>7.1f}{router_ms:>11}{ours:>16.2f}{sfn:>14.2f}")
    report_table(lines)
    return 0


def _measure(name: str, graph: str, value: Any, nodes: int, lifecycles: int) -> tuple[Any, ...]:
    from _refund_stack import PRICE, REGION, CallCounter, asked_question, deliver, moto_stack
    from bench_lifecycle_calls import REFUND_ROUTER_MEMORY_MB
    from bench_router_memory import billed, lambda_usd, measure

    with moto_stack(name.replace(" ", "-").replace("-", "")[:12]) as stack:
        import boto3

        from agent_wait.contract.schema import QUESTION_TABLE, Settings
        from agent_wait.host import HostSettings, build_router

        os.environ[Settings.GRAPH.value] = graph
        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        session = boto3.Session(region_name=REGION)
        counter.register(session)
        router = build_router(HostSettings.from_env("router"), session=session)
        sqs = session.client("sqs")
        counted: list[tuple[int, float, float, int, int]] = []
        for n in range(lifecycles + 1):  # the first warms the graph, clients and connections; not counted
            thread_id = f"{name.replace(' ', '-')}-{n}"
            begin = counter.mark()
            deliver(sqs, stack, router, {"thread_id": thread_id, "input": value}, thread_id)
            question = asked_question(reader, stack, thread_id)
            answer = {"thread_id": thread_id, "question_id": question, "answer": {"action": "approve"}}
            deliver(sqs, stack, router, answer, thread_id)
            calls = counter.calls[begin:]
            if n:
                counted.append(
                    (
                        len(calls),
                        sum(c.wru for c in calls),
                        sum(c.rru for c in calls),
                        sum(1 for c in calls if c.service == "sqs"),
                        sum(1 for c in calls if c.service == "sns"),
                    )
                )
        capped, _ = measure(stack, [REFUND_ROUTER_MEMORY_MB], max(lifecycles, 5), start_input=value)
    calls, wru, rru, sqs_requests, sns_publishes = (statistics.mean(row[i] for row in counted) for i in range(5))
    router_ms = billed(capped[REFUND_ROUTER_MEMORY_MB, "modelled"])[2]
    router = lambda_usd(REFUND_ROUTER_MEMORY_MB, router_ms)
    ours = (
        wru * PRICE["dynamodb_wru"]
        + rru * PRICE["dynamodb_rru"]
        + sqs_requests * PRICE["sqs_fifo_request"]
        + sns_publishes * PRICE["sns_publish"]
        + router
    )
    transitions = nodes + 2  # each node a task, the task-token wait, the end
    sfn = transitions * PRICE["sfn_transition"] + router + PRICE["sns_publish"]
    return name, calls, wru, rru, router_ms, ours * 1e6, sfn * 1e6


if __name__ == "__main__":
    raise SystemExit(main())
