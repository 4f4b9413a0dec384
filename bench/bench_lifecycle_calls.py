"""AWS API calls per question lifecycle (start → ask → answer → resume), and what a million of them cost.

Run: uv run --frozen python bench/bench_lifecycle_calls.py

A moto server in its own process on 127.0.0.1 holds the question table, the checkpoint
table, the entry FIFO queue and its DLQ, and an SNS topic, shaped as the AgentWait construct makes them.
A sender puts a start on the entry queue; Lambda's event source receives it and hands it to the router;
the router runs a refund graph until it asks finance; finance's approve goes through the same queue and
the router resumes the graph to the end. Every AWS call is counted with botocore event hooks and broken
down by service and operation; DynamoDB capacity units are computed from the sizes of the items each call
wrote or read (moto reports none). Then the cost of a million lifecycles at us-east-1 list prices is
printed beside the same work done by a Step Functions standard workflow with a task-token wait.

The router's Lambda time is measured as `bench_router_memory.py` measures it, at the refund example's router
memory (`REFUND_ROUTER_MEMORY_MB`): in a worker process whose CPU is capped at that size's share, each lifecycle
once as moto answers on loopback and once with a modelled AWS round trip on each call; the target row prices the
modelled one.

Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository: `examples`
from examples.refund_agent.settings import REFUND_ROUTER_MEMORY_MB

from _refund_stack import PRICE, REGION, Call, CallCounter, Stack, asked_question, deliver, moto_stack
from _targets import Target, report_targets

LIFECYCLES = 5
ROUTER_MEMORY_MB = 512  # the AgentWait construct's router default (bench_graphs.py prices each graph at it)
CAPPED_ROUNDS = 9
"""Lifecycles per wait in the capped worker that times the router (medians)."""

SFN_TRANSITIONS = 5
"""RunAgent (Task: Lambda) → AskFinance (Task: sns:publish.waitForTaskToken) → Decide (Choice) →
IssueRefund (Task: Lambda) → Done (Succeed): five state transitions per lifecycle."""


def main() -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with moto_stack() as stack:
        import boto3

        from agent_wait.contract.schema import QUESTION_TABLE
        from agent_wait.host import HostSettings, build_router

        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        session = boto3.Session(region_name=REGION)
        counter.register(session)
        router = build_router(HostSettings.from_env("router"), session=session)
        sqs = session.client("sqs")

        def lifecycle(n: int) -> tuple[list[Call], list[Call], float, float]:
            thread_id = f"order-{n}"
            begin = counter.mark()
            start_seconds = deliver(
                sqs, stack, router, {"thread_id": thread_id, "input": {"order_id": f"o-{n}", "amount": 900}}, thread_id
            )
            middle = counter.mark()
            question_id = asked_question(reader, stack, thread_id)
            answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
            answer_seconds = deliver(sqs, stack, router, answer, thread_id)
            return counter.calls[begin:middle], counter.calls[middle:], start_seconds, answer_seconds

        lifecycle(0)  # warm: the graph, clients and connections exist, as in a warm Lambda
        runs = [lifecycle(n) for n in range(1, LIFECYCLES + 1)]
        # Timed apart, in a worker capped at the example's memory, with nothing of the bench's own in its calls.
        from bench_router_memory import billed, measure

        capped, limiter_name = measure(stack, [REFUND_ROUTER_MEMORY_MB], CAPPED_ROUNDS)

    start_calls, answer_calls, _, _ = runs[-1]
    counts = [len(s) + len(a) for s, a, _, _ in runs]
    print(f"AWS API calls per question lifecycle (start → ask → answer → resume), {LIFECYCLES} warm lifecycles")
    print(f"calls per lifecycle across runs: {sorted(set(counts))}\n")
    report(start_calls, answer_calls, stack)
    router_ms = {wait: billed(rows)[2] for (_, wait), rows in capped.items()}
    usd = cost(start_calls + answer_calls, router_ms, limiter_name)
    targets(start_calls + answer_calls, usd, stack.table)
    return 0


def targets(calls: list[Call], usd: float, table: str) -> None:
    """Issue 27's rows this bench measures (the refund example), with the figure before it, the target and PASS or
    MISS."""
    question_wru = sum(c.wru for c in calls if c.resource == table)
    report_targets(
        [
            Target("AWS calls per lifecycle (start → ask → answer → resume)", "27", len(calls), 25),
            Target("DynamoDB write units per lifecycle, question table", "22", question_wru, 17),
            Target("DynamoDB write units per lifecycle, in all", "30", sum(c.wru for c in calls), 24),
            Target(
                f"$ per million lifecycles, router at {REFUND_ROUTER_MEMORY_MB} MB x86, capped, modelled AWS wait",
                "27.12",
                usd * 1e6,
                22,
                decimals=2,
            ),
        ]
    )
    polled = sum(1 for c in calls if c.service == "sqs" and c.operation in ("ReceiveMessage", "DeleteMessage"))
    loaded = len(calls) - polled + polled / 10
    print(
        f"Under load the event source receives and deletes up to 10 messages a call: {loaded:.1f} calls per"
        " lifecycle then (the row above counts one message a call, as when traffic is light)."
    )
    print("(sweep calls: bench_sweep.py; items read on a long thread: bench_thread_history.py; all: bench_targets.py)")


def _role(call: Call, stack: Stack) -> str:
    if call.service == "sqs" and call.operation == "SendMessage":
        return "sender"
    if call.service == "sqs" and call.operation in ("ReceiveMessage", "DeleteMessage"):
        return "event source"
    if call.resource == stack.checkpoint_table:
        return "router: checkpoints"
    if call.resource == stack.table:
        return "router: ledger"
    return "router: announce"


def report(start_calls: list[Call], answer_calls: list[Call], stack: Stack) -> None:
    rows: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    units: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for phase, calls in (("start", start_calls), ("answer", answer_calls)):
        for call in calls:
            key = (_role(call, stack), f"{call.service}:{call.operation}")
            rows[key][phase] += 1
            units[key][0] += call.wru
            units[key][1] += call.rru
    print(f"{'who':<22}{'call':<24}{'start':>7}{'answer':>8}{'total':>7}{'WRU':>7}{'RRU':>7}")
    for key, phases in sorted(rows.items()):
        total = phases["start"] + phases["answer"]
        wru, rru = units[key]
        print(f"{key[0]:<22}{key[1]:<24}{phases['start']:>7}{phases['answer']:>8}{total:>7}{wru:>7.0f}{rru:>7.1f}")
    calls = start_calls + answer_calls
    print(
        f"{'':<22}{'all calls':<24}{len(start_calls):>7}{len(answer_calls):>8}{len(calls):>7}"
        f"{sum(c.wru for c in calls):>7.0f}{sum(c.rru for c in calls):>7.1f}"
    )
    for table, name in ((stack.table, "question table"), (stack.checkpoint_table, "checkpoint table")):
        mine = [c for c in calls if c.resource == table]
        print(f"{name}: {len(mine)} calls, {sum(c.wru for c in mine):.0f} WRU, {sum(c.rru for c in mine):.1f} RRU")
    print()


def cost(calls: list[Call], router_ms: dict[str, int], limiter_name: str) -> float:
    """Print what a million lifecycles cost, the router billed its capped time with the modelled AWS wait; return
    the dollars of one."""
    from bench_router_memory import AWS_WAIT_MS

    wru = sum(c.wru for c in calls)
    rru = sum(c.rru for c in calls)
    sqs = sum(1 for c in calls if c.service == "sqs")
    sns = sum(1 for c in calls if c.service == "sns")
    invocations = 2
    gb_seconds = router_ms["modelled"] / 1000 * REFUND_ROUTER_MEMORY_MB / 1024
    loopback_gb_seconds = router_ms["loopback"] / 1000 * REFUND_ROUTER_MEMORY_MB / 1024
    lines = [
        ("DynamoDB writes", wru, "WRU", wru * PRICE["dynamodb_wru"]),
        ("DynamoDB reads", rru, "RRU", rru * PRICE["dynamodb_rru"]),
        ("SQS FIFO requests", sqs, "requests", sqs * PRICE["sqs_fifo_request"]),
        ("SNS publishes", sns, "publishes", sns * PRICE["sns_publish"]),
        ("Lambda requests", invocations, "invocations", invocations * PRICE["lambda_request"]),
        ("Lambda compute", gb_seconds, "GB-s", gb_seconds * PRICE["lambda_gb_second"]),
    ]
    ours = sum(line[3] for line in lines)
    sfn_lambda = invocations * PRICE["lambda_request"] + gb_seconds * PRICE["lambda_gb_second"]
    sfn = SFN_TRANSITIONS * PRICE["sfn_transition"] + sfn_lambda + 1 * PRICE["sns_publish"]

    print("Prices (us-east-1 list prices; free tiers ignored):")
    print("  DynamoDB on-demand: $0.625 per million write request units, $0.125 per million read request units")
    print("  SQS FIFO: $0.50 per million requests; SNS standard: $0.50 per million publishes (SQS delivery free)")
    print("  Lambda (x86): $0.20 per million requests, $0.0000166667 per GB-second")
    print("  Step Functions standard: $0.025 per 1,000 state transitions")
    print("Assumptions:")
    print("  - Capacity units from item sizes: a write is 1 WRU per KB of the larger of the item before and")
    print("    after, plus 1 per GSI holding the item (2 when its index key changes); a read is 1 RRU per 4 KB,")
    print("    half for eventually consistent reads (the checkpointer's). Item and table storage not included.")
    print("  - The event source costs one ReceiveMessage and one DeleteMessage per message (batch size 1);")
    print("    its empty long polls are a fixed cost per queue, not per lifecycle, and are left out.")
    print(f"  - Two warm router invocations at {REFUND_ROUTER_MEMORY_MB} MB (the refund example's router), billed")
    print(f"    the medians of {CAPPED_ROUNDS} lifecycles in a worker whose CPU is capped at that size's share")
    print(f"    ({limiter_name}; bench_router_memory.py): {router_ms['modelled']} ms a lifecycle with each AWS")
    print(f"    call held a modelled round trip more ({AWS_WAIT_MS} ms, an assumption),")
    print(f"    {router_ms['loopback']} ms as moto answers on loopback.")
    print("    Cold starts left out (bench_cold_start.py --memory times them under the same cap).")
    print(f"  - Step Functions: {SFN_TRANSITIONS} transitions (RunAgent Task → AskFinance Task with")
    print("    .waitForTaskToken via SNS → Decide Choice → IssueRefund Task → Done Succeed), the same two Lambda")
    print("    invocations and one SNS publish; no ledger, checkpoints or queue (the execution holds the state).")
    print()
    print(f"{'per lifecycle':<22}{'quantity':>12}  {'unit':<12}{'USD':>14}{'per million':>14}")
    for name, quantity, unit, usd in lines:
        print(f"{name:<22}{quantity:>12.2f}  {unit:<12}{usd:>14.8f}{usd * 1e6:>14.2f}")
    print(f"{'agent-wait total':<22}{'':>12}  {'':<12}{ours:>14.8f}{ours * 1e6:>14.2f}")
    print()
    print(
        f"{'Step Functions':<22}{SFN_TRANSITIONS:>12.2f}  {'transitions':<12}"
        f"{SFN_TRANSITIONS * PRICE['sfn_transition']:>14.8f}{SFN_TRANSITIONS * PRICE['sfn_transition'] * 1e6:>14.2f}"
    )
    print(
        f"{'  + Lambda and SNS':<22}{'':>12}  {'':<12}{sfn - SFN_TRANSITIONS * PRICE['sfn_transition']:>14.8f}"
        f"{(sfn - SFN_TRANSITIONS * PRICE['sfn_transition']) * 1e6:>14.2f}"
    )
    print(f"{'Step Functions total':<22}{'':>12}  {'':<12}{sfn:>14.8f}{sfn * 1e6:>14.2f}")
    print(f"\nagent-wait / Step Functions: {ours / sfn:.2f}")
    on_loopback = ours + (loopback_gb_seconds - gb_seconds) * PRICE["lambda_gb_second"]
    print(
        f"As moto answers on loopback ({router_ms['loopback']} ms a lifecycle, no modelled wait) agent-wait would "
        f"total {on_loopback * 1e6:.2f} per million."
    )
    arm = gb_seconds * PRICE["lambda_gb_second_arm64"]
    x86 = gb_seconds * PRICE["lambda_gb_second"]
    print(
        f"On arm64 (Graviton, $0.0000133334 per GB-s) the same billed time would cost {arm * 1e6:.2f} per million "
        f"instead of {x86 * 1e6:.2f}: a total of {(ours - x86 + arm) * 1e6:.2f}."
    )
    print("  (Priced, not measured: the router was not run on Graviton here, so its duration there is assumed equal;")
    print("  the construct's default stays x86 until Graviton's duration is measured on Lambda.)")
    return ours


if __name__ == "__main__":
    raise SystemExit(main())
