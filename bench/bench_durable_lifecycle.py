"""One question asked from an AWS Lambda durable function: AWS calls, durable operations, and a million priced.

Run: uv run --frozen python bench/bench_durable_lifecycle.py

The refund agent as a durable function (`agent_wait.durable.ask`, then a `refund` step) runs under the durable
SDK's own local runner; the question table, the entry FIFO queue and the SNS topic are on a moto server in its own
process, shaped as the AgentWait construct makes them. Finance approves through the entry queue (as
`bench_lifecycle_calls.py` answers the graph), the router (`agent_wait.asking.callbacks.DURABLE_ONLY`) decides and
completes the callback over the runner's Lambda API on 127.0.0.1, and the function finishes. agent-wait's AWS calls are
counted with botocore hooks and their DynamoDB units estimated from item sizes, as `bench_lifecycle_calls.py` does; the
durable operations are counted from the execution's history; the durable function's and the router's invocations
are timed. Then a million lifecycles are priced at us-east-1 list prices, with durable functions' published price
per operation (an estimate: the runner is not Lambda, and the price list may change; every price is printed).

Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _refund_stack import PRICE, REGION, CallCounter, deliver, moto_server

LIFECYCLES = 5
MEMORY_MB = 512  # the durable function's and the router's memory, as the router's default
DURABLE_OPERATION = 8.00 / 1e6
"""Lambda durable functions: per durable operation (step, wait, callback, child context, ...), us-east-1 list price.
Data written ($ per GB) and retained ($ per GB-month) are billed too: a few KB a lifecycle here, left out."""

os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
)

from aws_durable_execution_sdk_python import DurableContext, durable_execution  # noqa: E402
from aws_durable_execution_sdk_python_testing.runner import DurableFunctionTestRunner  # noqa: E402
from aws_durable_execution_sdk_python_testing.web.server import WebServer, WebServiceConfig  # noqa: E402

from agent_wait import WaitPolicy  # noqa: E402
from agent_wait.contract.announcer import BaseAnnounce  # noqa: E402
from agent_wait.contract.envelope import Transition, WaitEnvelope  # noqa: E402

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, allowed_actions=("approve", "reject"))
SETUP: dict[str, Any] = {}
HANDLER_SECONDS: list[float] = []


class Asked(BaseAnnounce):
    """Tells the bench a question was announced (no AWS call: not counted)."""

    name = "asked"

    def __init__(self) -> None:
        super().__init__(delivers=[Transition.CREATED])
        self.asked: dict[str, str] = {}
        self.changed = threading.Condition()

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        with self.changed:
            self.asked[envelope.thread_id] = envelope.question_id
            self.changed.notify_all()

    def question_on(self, thread_id: str) -> str:
        with self.changed:
            if not self.changed.wait_for(lambda: thread_id in self.asked, timeout=30):
                raise TimeoutError(f"no question was asked on {thread_id}")
            return self.asked[thread_id]


@durable_execution
def refund(event: dict[str, Any], context: DurableContext) -> dict[str, Any]:
    from agent_wait.durable import ask

    question = {"function": "issue_refund", "args": {"order_id": event["order_id"], "amount": event["amount"]}}
    answer = ask(context, question, FINANCE, ledger=SETUP["ledger"], announce=SETUP["announce"])
    approved = answer.get("action") == "approve"
    return context.step(lambda _: {"refunded": event["amount"] if approved else 0}, name="issue_refund")


def timed_refund(event: Any, lambda_context: Any) -> Any:
    """The durable function as Lambda invokes it, timed: each invocation is billed."""
    started = time.perf_counter()
    try:
        return refund(event, lambda_context)
    finally:
        HANDLER_SECONDS.append(time.perf_counter() - started)


@dataclass
class Queue:
    queue_url: str


def main() -> int:
    import boto3

    from agent_wait.asking.callbacks import DURABLE_ONLY
    from agent_wait.aws import DynamoDbLedger, SnsAnnounce
    from agent_wait.aws.callbacks import LambdaCallbacks
    from agent_wait.contract.messages import group_id_for
    from agent_wait.contract.schema import QUESTION_TABLE
    from agent_wait.engine.dead_letter import InMemoryDeadLetter
    from agent_wait.engine.router import Router

    logging.getLogger("aws_durable_execution_sdk_python_testing").setLevel(logging.WARNING)
    with moto_server() as endpoint:
        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
        reader.create_table(**QUESTION_TABLE.create_table_request("durable-questions"))
        session = boto3.Session(region_name=REGION)
        counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        counter.register(session)
        sqs = session.client("sqs", endpoint_url=endpoint)
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        queue = Queue(sqs.create_queue(QueueName="durable-entry.fifo", Attributes=fifo)["QueueUrl"])
        topic = session.client("sns", endpoint_url=endpoint).create_topic(Name="durable-announce")["TopicArn"]
        counter.calls.clear()
        asked = Asked()
        ledger = DynamoDbLedger("durable-questions", client=session.client("dynamodb", endpoint_url=endpoint))
        announce = [SnsAnnounce(topic, client=session.client("sns", endpoint_url=endpoint)), asked]
        SETUP.update(ledger=ledger, announce=announce)
        runner = DurableFunctionTestRunner(timed_refund, poll_interval=0.01, skip_time=False, region=REGION)
        web = WebServer(WebServiceConfig(host="127.0.0.1", port=0, log_level=logging.WARNING), runner._executor)
        threading.Thread(target=web.serve_forever, daemon=True).start()
        host, port = web.server_address[:2]
        callbacks = boto3.client("lambda", region_name=REGION, endpoint_url=f"http://{host}:{port}")
        router = Router(
            DURABLE_ONLY,
            ledger,
            dead_letter=InMemoryDeadLetter(),
            announce=announce,
            reply_to={"queue_url": queue.queue_url},
            callbacks=LambdaCallbacks(client=callbacks),
        )

        def lifecycle(n: int) -> tuple[list[Any], list[Any], int, list[float], float]:
            begin, invocations = counter.mark(), len(HANDLER_SECONDS)
            arn = runner.run_async(
                input=json.dumps({"order_id": f"o-{n}", "amount": 900}), execution_name=f"refund-{n}"
            )
            question_id = asked.question_on(arn)
            middle = counter.mark()
            answer = {"thread_id": arn, "question_id": question_id, "answer": {"action": "approve"}}
            router_seconds = deliver(sqs, queue, router, answer, group_id_for(arn))  # type: ignore[arg-type]
            finished = runner.wait_for_result(arn, timeout=30)
            assert json.loads(finished.result or "{}") == {"refunded": 900}, finished
            history = runner.get_execution_history(arn).events
            operations = sum(
                1 for e in history if e.event_type.endswith("Started") and e.event_type != "ExecutionStarted"
            )
            return (
                counter.calls[begin:middle],
                counter.calls[middle:],
                operations,
                HANDLER_SECONDS[invocations:],
                router_seconds,
            )

        try:
            lifecycle(0)  # warm
            runs = [lifecycle(n) for n in range(1, LIFECYCLES + 1)]
        finally:
            web.shutdown()
            web.server_close()
            runner.close()

    ask_calls, answer_calls, operations, handler_runs, _ = runs[-1]
    calls = ask_calls + answer_calls
    handler_billed = statistics.median(s for run in runs for s in run[3])
    router_billed = statistics.median(run[4] for run in runs)
    invocations = len(handler_runs)
    print(
        f"One durable-function question lifecycle (ask → approve through the entry queue → refund), {LIFECYCLES} warm"
    )
    print(f"agent-wait's AWS calls per lifecycle: {len(calls)} (the submitter's put and publish, then the answer's)")
    for call in calls:
        print(f"  {call.service}:{call.operation:<16} {call.resource:<24} WRU {call.wru:>4.0f}  RRU {call.rru:>4.1f}")
    wru, rru = sum(c.wru for c in calls), sum(c.rru for c in calls)
    sqs_requests = sum(1 for c in calls if c.service == "sqs")
    sns_publishes = sum(1 for c in calls if c.service == "sns")
    print(
        f"durable operations: {operations}; durable function invocations: {invocations} "
        f"(median {handler_billed * 1000:.0f} ms); router invocations: 1 (median {router_billed * 1000:.0f} ms)"
    )
    gb = MEMORY_MB / 1024
    lines = [
        ("durable operations", operations, operations * DURABLE_OPERATION),
        ("durable fn requests", invocations, invocations * PRICE["lambda_request"]),
        (
            "durable fn compute",
            invocations * handler_billed * gb,
            invocations * handler_billed * gb * PRICE["lambda_gb_second"],
        ),
        ("DynamoDB writes (WRU)", wru, wru * PRICE["dynamodb_wru"]),
        ("DynamoDB reads (RRU)", rru, rru * PRICE["dynamodb_rru"]),
        ("SQS FIFO requests", sqs_requests, sqs_requests * PRICE["sqs_fifo_request"]),
        ("SNS publishes", sns_publishes, sns_publishes * PRICE["sns_publish"]),
        ("router requests", 1, PRICE["lambda_request"]),
        ("router compute", router_billed * gb, router_billed * gb * PRICE["lambda_gb_second"]),
    ]
    print("\nPrices: durable functions $8.00 per million durable operations (data written and retained left out);")
    print("DynamoDB on-demand $0.625 per million WRU, $0.125 per million RRU; SQS FIFO and SNS $0.50 per million;")
    print(f"Lambda x86 $0.20 per million requests, $0.0000166667 per GB-s, both functions at {MEMORY_MB} MB, billed")
    print("the measured median (in this process, on loopback: a real Lambda's replies take longer).\n")
    print(f"{'per lifecycle':<24}{'quantity':>10}{'per million':>14}")
    for name, quantity, usd in lines:
        print(f"{name:<24}{quantity:>10.3f}{usd * 1e6:>14.2f}")
    total = sum(usd for _, _, usd in lines)
    print(f"{'total':<24}{'':>10}{total * 1e6:>14.2f}")
    print(
        f"of which durable functions' own: {sum(usd for _, _, usd in lines[:3]) * 1e6:.2f}; agent-wait's:"
        f" {sum(usd for _, _, usd in lines[3:]) * 1e6:.2f}"
    )
    print("(the router hosting the graph instead: bench_lifecycle_calls.py)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
