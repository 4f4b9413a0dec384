"""Checkpoint cost and resume latency by state size, kept in DynamoDB or offloaded to S3 (issue 27's offload curve).

Run: uv run --frozen python bench/bench_checkpoint_size.py [--lifecycles 5] [--sizes 4,16,32,64,128,350]

The refund-shaped graph of `bench_lifecycle_calls.py` (prepare → review, which asks finance → finish), except that
`prepare` attaches a case file of `size` KB to the state (incompressible text, so the sizes are what is stored):
the step's writes and every checkpoint after it carry it. For each size the lifecycle (start → ask → answer →
resume) runs through the real router on moto (a server in its own process), each message sent, received and
deleted as Lambda's event source does (`_refund_stack.deliver`), twice over:

- **table**: the router's saver keeps every payload in the checkpoint table (the threshold at its highest,
  `AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES=408576`);
- **S3**: the threshold at half the size, so the payloads that carry the case file go to the checkpoint bucket
  and the small ones stay in the table.

Printed per size and place: the checkpoint table's WRU and RRU per lifecycle (computed from item sizes as
DynamoDB bills them, `bench/_capacity.py`; moto reports none), the S3 `PutObject` and `GetObject` calls, what a
million lifecycles of those cost, and the router's median wall time handling the answer (the resume) and the
start, with the bench's counting off. Then, per size, the cheaper place, with and without the Lambda time S3's
real round trips would add (moto answers on 127.0.0.1; S3 is a network round trip away). Figures, not a test:
it exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SIZES_KB = (4, 8, 12, 16, 32, 64, 128, 350)
"""Issue 27's sizes, with 8 and 12 KB added where the curve crosses."""
TABLE_MAX = 399 * 1024
"""The highest threshold the saver takes (`PAYLOAD_LIMIT`): every payload stays in the table."""
ROUTER_MEMORY_MB = 1024
S3_ROUND_TRIP_MS = (20, 50)
"""Assumed extra wall time per S3 request from Lambda in the same region (see the docs' scaling page), a range:
not measured here: moto answers on loopback, S3 a network round trip away."""
PRICE = {
    "wru": 0.625 / 1e6,  # DynamoDB on-demand, per write request unit
    "rru": 0.125 / 1e6,  # per read request unit
    "put": 0.005 / 1000,  # S3 Standard, per PUT (COPY, POST, LIST) request
    "get": 0.0004 / 1000,  # per GET (and all other) request
    "gb_second": 0.0000166667,  # Lambda x86
}


# -- the graph: the refund example with a case file of `size` bytes in its state -------------------------------------


class State(TypedDict):
    order_id: str
    amount: int
    size: int
    case_file: NotRequired[str]
    refund: NotRequired[Any]
    done: NotRequired[bool]


def case_file(order_id: str, size: int) -> str:
    """`size` characters that do not compress (hex of chained hashes), the same for the same order."""
    chunks, seed = [], order_id.encode()
    while sum(map(len, chunks)) < size:
        seed = hashlib.sha256(seed).digest()
        chunks.append(seed.hex())
    return "".join(chunks)[:size]


@wait(WaitPolicy(timeout="P3D", default={"action": "reject"}))
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    return {"status": "refunded", "amount": amount}


def build_graph(checkpointer: Any) -> Any:
    """START → prepare (attaches the case file) → review (asks finance) → finish → END."""
    builder = StateGraph(State)
    builder.add_node("prepare", lambda state: {"case_file": case_file(state["order_id"], state["size"])})
    builder.add_node("review", lambda state: {"refund": issue_refund(state["order_id"], state["amount"])})
    builder.add_node("finish", lambda state: {"done": len(state.get("case_file", "")) == state["size"]})
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


# -- measuring ----------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One size in one place: its router, and what its lifecycles cost and took."""

    size_kb: int
    place: str
    router: Any = None
    wru: list[float] = field(default_factory=list)
    rru: list[float] = field(default_factory=list)
    puts: list[int] = field(default_factory=list)
    gets: list[int] = field(default_factory=list)
    resume_s3: list[int] = field(default_factory=list)
    """S3 requests while the router handles the answer: each adds a real round trip to the resume."""
    start_s: list[float] = field(default_factory=list)
    answer_s: list[float] = field(default_factory=list)

    @property
    def threshold(self) -> int:
        return TABLE_MAX if self.place == "table" else self.size_kb * 1024 // 2

    def usd(self) -> float:
        """Checkpoint storage requests per lifecycle, in dollars: table writes and reads, S3 PUTs and GETs."""
        return (
            statistics.mean(self.wru) * PRICE["wru"]
            + statistics.mean(self.rru) * PRICE["rru"]
            + statistics.mean(self.puts) * PRICE["put"]
            + statistics.mean(self.gets) * PRICE["get"]
        )

    def s3_requests(self) -> float:
        return statistics.mean(self.puts) + statistics.mean(self.gets)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=5, help="counted lifecycles, and as many timed, per case")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="state sizes in KB, comma-separated")
    args = parser.parse_args()
    from _refund_stack import REGION, CallCounter, asked_question, deliver, moto_stack

    cases = [Case(int(kb), place) for kb in args.sizes.split(",") for place in ("table", "S3")]
    with moto_stack("ckpt") as stack:
        import boto3

        from agent_wait.contract.schema import QUESTION_TABLE, Settings
        from agent_wait.host import HostSettings, build_router

        bucket = "ckpt-bucket"
        boto3.client("s3", region_name=REGION, endpoint_url=stack.endpoint).create_bucket(Bucket=bucket)
        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        session = boto3.Session(region_name=REGION)
        counter.register(session)
        sqs = session.client("sqs")
        os.environ[Settings.GRAPH.value] = "bench_checkpoint_size:build_graph"
        os.environ[Settings.CHECKPOINT_BUCKET.value] = bucket
        for case in cases:
            os.environ[Settings.CHECKPOINT_OFFLOAD_BYTES.value] = str(case.threshold)
            case.router = build_router(HostSettings.from_env("router"), session=session)
        serial = iter(range(10**9))

        def lifecycle(case: Case) -> tuple[list[Any], list[Any]]:
            thread_id = f"case-{case.size_kb}-{case.place}-{next(serial)}"
            value = {"order_id": thread_id, "amount": 900, "size": case.size_kb * 1024}
            begin = counter.mark()
            case.start_s.append(deliver(sqs, stack, case.router, {"thread_id": thread_id, "input": value}, thread_id))
            question_id = asked_question(reader, stack, thread_id)
            middle = counter.mark()
            answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
            case.answer_s.append(deliver(sqs, stack, case.router, answer, thread_id))
            return counter.calls[begin:], counter.calls[middle:]

        for case in cases:
            lifecycle(case)  # warm: the graph, clients and connections exist, as in a warm Lambda
            for _ in range(args.lifecycles):
                calls, answering = lifecycle(case)
                case.resume_s3.append(sum(1 for c in answering if c.service == "s3"))
                mine = [c for c in calls if c.resource == stack.checkpoint_table]
                case.wru.append(sum(c.wru for c in mine))
                case.rru.append(sum(c.rru for c in mine))
                case.puts.append(sum(1 for c in calls if (c.service, c.operation) == ("s3", "PutObject")))
                case.gets.append(sum(1 for c in calls if (c.service, c.operation) == ("s3", "GetObject")))
        counter.counting = False
        for case in cases:
            case.start_s.clear()
            case.answer_s.clear()
        for _ in range(args.lifecycles + 2):  # timed round by round, so the machine's load hits every case alike
            for case in cases:
                lifecycle(case)
    report(cases, args.lifecycles)
    return 0


def _on_aws(case: Case) -> str:
    """The measured resume plus S3's assumed round trips for each S3 request it made (a range, not a measurement)."""
    measured = statistics.median(case.answer_s) * 1000
    low, high = (measured + statistics.mean(case.resume_s3) * ms for ms in S3_ROUND_TRIP_MS)
    return f"{low:.0f}" if low == high else f"{low:.0f} to {high:.0f}"


def report(cases: list[Case], lifecycles: int) -> None:
    print(
        f"Checkpoint cost and latency per lifecycle by state size, {lifecycles} counted and {lifecycles + 2} timed"
        " lifecycles per case, the router on moto (127.0.0.1, its own process)"
    )
    print(
        f"{'state':>7}  {'place':<6}{'WRU':>8}{'RRU':>8}{'PUT':>5}{'GET':>5}{'$/M':>9}"
        f"{'resume ms':>11}{'start ms':>10}{'S3 on resume':>14}{'resume ms on AWS':>18}"
    )
    for case in cases:
        print(
            f"{case.size_kb:>4} KB  {case.place:<6}{statistics.mean(case.wru):>8.1f}{statistics.mean(case.rru):>8.1f}"
            f"{statistics.mean(case.puts):>5.1f}{statistics.mean(case.gets):>5.1f}{case.usd() * 1e6:>9.2f}"
            f"{statistics.median(case.answer_s) * 1000:>11.1f}{statistics.median(case.start_s) * 1000:>10.1f}"
            f"{statistics.mean(case.resume_s3):>14.1f}{_on_aws(case):>18}"
        )
    print(
        "\n$/M: checkpoint storage requests per million lifecycles: DynamoDB on-demand $0.625 per million WRU and"
        " $0.125 per million RRU; S3 Standard $0.005 per 1,000 PUTs and $0.0004 per 1,000 GETs. Storage (DynamoDB"
        " $0.25, S3 $0.023 per GB-month) is left out: checkpoints live until their TTL."
    )
    print(
        "Resume ms: the router's median wall time handling the answer (read the checkpoint, resume, write); start ms"
        " likewise for the start. moto answers S3 and DynamoDB on loopback, so these show the router's own cost of each"
        " place and moto's, not S3's real extra round trip. Resume ms on AWS adds "
        f"{' to '.join(map(str, S3_ROUND_TRIP_MS))} ms per S3 request on the resume: an assumed range, not measured."
    )
    gb = ROUTER_MEMORY_MB / 1024
    print(
        "\nPer size, the cheaper place: requests alone, then with each S3 request adding "
        f"{' or '.join(map(str, S3_ROUND_TRIP_MS))} ms of Lambda time at {ROUTER_MEMORY_MB} MB x86"
        " (an assumed round trip, not measured)"
    )
    by_size: dict[int, dict[str, Case]] = {}
    for case in cases:
        by_size.setdefault(case.size_kb, {})[case.place] = case
    for size, pair in by_size.items():
        table, s3 = pair["table"].usd() * 1e6, pair["S3"].usd() * 1e6
        cells = [f"{size:>4} KB: table {table:7.2f}  S3 {s3:7.2f}  → {'S3' if s3 < table else 'table'}"]
        for ms in S3_ROUND_TRIP_MS:
            lam = pair["S3"].s3_requests() * ms / 1000 * gb * PRICE["gb_second"] * 1e6
            cells.append(f"S3 at {ms} ms {s3 + lam:7.2f} → {'S3' if s3 + lam < table else 'table'}")
        print("   ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
