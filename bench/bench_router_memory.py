"""The router's billed duration and cost per lifecycle by Lambda memory size, its CPU capped as Lambda caps it.

Run: uv run --frozen python bench/bench_router_memory.py [--rounds 7] [--memory 128,256,512,768,1024,1769]
     [--aws-wait dynamodb=6,sns=15,s3=20,*=10]

Lambda gives a function CPU in proportion to its memory: 1,769 MB is one vCPU. There is no Lambda here, so the
router runs in a worker process of its own whose CPU share is capped at M/1769 of one CPU for each memory size M
(`_cpu_cap`: CFS bandwidth control, or a SIGSTOP/SIGCONT duty cycle where no cgroup may be made), with moto's
server in another process, uncapped (so only the router is slowed, as only the function is on Lambda).

The worker builds the router once (`bench_lifecycle_calls.py`'s refund graph and stack), runs one lifecycle
uncapped to warm it, then runs lifecycles on request: a start and its answer, each sent to the entry queue,
received and deleted as Lambda's event source does, `Router.handle` timed (wall and CPU). Memory sizes are
interleaved round by round, so the machine's other load falls on each alike.

Each lifecycle runs twice: as measured (moto answers on loopback, in a millisecond or two), and with every AWS
call the router makes held a further modelled round trip (`--aws-wait`, milliseconds per service; a botocore
`before-send` hook sleeps it, so it is billed as waiting, not CPU). Loopback understates what Lambda pays to
wait for DynamoDB and SNS; the model is an assumption, printed with the figures, not a measurement of AWS.

Per size and wait: the median wall time of a start and of an answer, billed as Lambda bills each invocation
(rounded up to 1 ms), GB-seconds, and dollars per million lifecycles at x86 and arm64 prices with $0.20 per
million requests. Figures, not a test: it exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository: `tests.agents`
from _cpu_cap import cpu_share, limiter

MEMORY_MB = (128, 256, 512, 768, 1024, 1769)
PRICE = {
    "request": 0.20 / 1e6,
    "x86_64": 0.0000166667,  # per GB-second
    "arm64": 0.0000133334,
}
INVOCATIONS = 2
"""A lifecycle is two router invocations: the start and the answer (batch size 1)."""
AWS_WAIT_MS = "dynamodb=6,sns=15,s3=20,*=10"
"""The modelled extra round trip of each call over loopback, in ms by service (`*`: any other). An assumption:
DynamoDB documents single-digit-millisecond latency on its side; an SNS publish waits for SNS to store the message.
Change it with --aws-wait to see how the curve moves."""
WAITS = ("loopback", "modelled")


def parse_waits(text: str) -> dict[str, float]:
    """`dynamodb=6,sns=15,*=10` as seconds by botocore service name."""
    waits: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        service, _, ms = part.partition("=")
        try:
            waits[service.strip()] = float(ms) / 1000
        except ValueError:
            raise SystemExit(f"--aws-wait: {part!r} is not service=milliseconds, such as dynamodb=6") from None
    return waits


# -- the worker: the router in a process of its own --------------------------------------------------------------


def worker() -> int:
    """Build the router, warm it, then run one lifecycle per `run <wait>` line on stdin and print its timings."""
    import resource

    import boto3

    from _refund_stack import REGION, Stack, asked_question, deliver, deliver_sent
    from agent_wait.host import HostSettings, build_router

    stack = Stack(**json.loads(os.environ["BENCH_STACK"]))
    waits = parse_waits(os.environ["BENCH_AWS_WAIT"])
    start_input = json.loads(os.environ.get("BENCH_START_INPUT") or "null")  # None: the refund graph's order
    waiting = {"on": False}

    def round_trip(event_name: str, **_: Any) -> None:
        if waiting["on"]:
            service = event_name.split(".")[1]
            time.sleep(waits.get(service, waits.get("*", 0.0)))

    session = boto3.Session(region_name=REGION)  # the router's: only its calls wait the model
    session.events.register("before-send.*.*", round_trip)
    router = build_router(HostSettings.from_env("router"), session=session)
    answer_api = _answer_api(session) if os.environ.get("BENCH_ANSWER_VIA") == "api" else None
    bench = boto3.Session(region_name=REGION)  # the sender's and the event source's calls, not billed as the router's
    sqs = bench.client("sqs")
    reader = bench.client("dynamodb")
    serial = iter(range(10**9))

    def timed(message: dict[str, Any], thread_id: str) -> tuple[float, float]:
        cpu = time.process_time()
        wall = deliver(sqs, stack, router, message, thread_id)
        return wall, time.process_time() - cpu  # CPU includes the send and receive around it: an upper bound

    def lifecycle() -> dict[str, float]:
        thread_id = f"order-{os.getpid()}-{next(serial)}"
        value = {"order_id": thread_id, "amount": 900} if start_input is None else start_input
        start = timed({"thread_id": thread_id, "input": value}, thread_id)
        question_id = asked_question(reader, stack, thread_id)
        api_wall = 0.0
        if answer_api is None:
            message = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}
            answer = timed(message, thread_id)
        else:  # a person answers through the answer API; the router then carries the hand-over it queued
            began = time.perf_counter()
            answer_api(question_id)
            api_wall = time.perf_counter() - began
            cpu = time.process_time()
            answer = (deliver_sent(sqs, stack, router), time.process_time() - cpu)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
        return {
            "start": start[0],
            "answer": answer[0],
            "api": api_wall,
            "start_cpu": start[1],
            "answer_cpu": answer[1],
            "rss": rss_mb,
        }

    lifecycle()
    print("ready", flush=True)
    for line in sys.stdin:
        command, _, wait = line.strip().partition(" ")
        if command != "run":
            break
        waiting["on"] = wait == "modelled"
        print(json.dumps(lifecycle()), flush=True)
    return 0


def _answer_api(session: Any) -> Any:
    """A function that answers a question through the answer API's routes, as its Lambda does (`POST
    /questions/{id}/answer` with a signed-in approver's claims), on `session`'s clients (so its AWS calls wait the
    model too)."""
    from tests.support.api_events import http_event

    from agent_wait.host import HostSettings, api
    from agent_wait.host.api import ApiContext, create_app
    from agent_wait.local.handlers import API_HANDLER, LambdaContext

    # Its one INFO line a request is formatted and written, as on Lambda, but not onto the worker's stdout (its pipe).
    api.logger.registered_handler.stream = open(os.devnull, "w")  # type: ignore[attr-defined]  # noqa: SIM115
    context = ApiContext.from_settings(HostSettings.from_env("api"), session=session)
    app = create_app(lambda: context)
    serial = iter(range(10**9))

    def answer(question_id: str) -> None:
        body = {"answer": {"action": "approve"}}
        headers = {"idempotency-key": f"bench-{os.getpid()}-{next(serial)}"}
        event = http_event("POST", f"/questions/{question_id}/answer", body, headers=headers, claims=APPROVER)
        response = app.resolve(event, LambdaContext(API_HANDLER))
        if response["statusCode"] != 200:
            status, said = response["statusCode"], response["body"]
            raise RuntimeError(f"the answer API refused the bench's answer: {status} {said}")

    return answer


APPROVER = {
    "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_bench",
    "sub": "u-finance",
    "email": "finance@example.com",
    "email_verified": "true",
    "cognito:groups": ["finance"],
}
"""The claims API Gateway's authorizer verified for the approver who answers through the API."""


# -- the curve ---------------------------------------------------------------------------------------------------


Runs = dict[tuple[int, str], list[dict[str, float]]]


def measure(
    stack: Any,
    sizes: list[int],
    rounds: int,
    aws_wait: str = AWS_WAIT_MS,
    *,
    start_input: Any = None,
    answer_via: str = "queue",
) -> tuple[Runs, str]:
    """`rounds` lifecycles of the router per memory size and wait, interleaved, in a capped worker on `stack`.

    The worker runs the graph `AGENT_WAIT_GRAPH` names (the refund graph `moto_stack` sets, unless the caller set
    another), started with `start_input` (default: a refund order) and approved: on the entry queue, or with
    `answer_via="api"` through the answer API's routes (timed as `api`; the router's `answer` is then the hand-over
    the API queued). Each whole lifecycle runs under one cap, so a caller that bills the API at another memory size
    than the router passes both sizes and reads each function's time from its own size's rows.
    Returns the timings by (memory, wait) and the name of the limiter that capped the worker.
    """
    parse_waits(aws_wait)  # refuse a bad model before anything starts
    runs: Runs = {(m, w): [] for m in sizes for w in WAITS}
    env = {
        **os.environ,
        "BENCH_STACK": json.dumps(stack.__dict__),
        "BENCH_AWS_WAIT": aws_wait,
        "BENCH_START_INPUT": json.dumps(start_input),
        "BENCH_ANSWER_VIA": answer_via,
    }
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    cap = limiter()
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the router's worker did not start")
        cap.add(child.pid)
        for _ in range(rounds):
            for memory in sizes:
                for wait in WAITS:
                    with cap.cap(memory):
                        child.stdin.write(f"run {wait}\n")
                        child.stdin.flush()
                        runs[memory, wait].append(json.loads(child.stdout.readline()))
    finally:
        if child.poll() is None:
            child.stdin.close()
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
        cap.close()
    return runs, cap.name


def billed(rows: list[dict[str, float]]) -> tuple[float, float, int]:
    """The median start and answer in ms, and the lifecycle's billed ms: each invocation rounded up to 1 ms."""
    start = statistics.median(r["start"] for r in rows) * 1000
    answer = statistics.median(r["answer"] for r in rows) * 1000
    return start, answer, math.ceil(start) + math.ceil(answer)


def lambda_usd(memory_mb: int, billed_ms: int, architecture: str = "x86_64") -> float:
    """Dollars of one lifecycle's two router invocations at `memory_mb`, billed `billed_ms` between them."""
    return billed_ms / 1000 * memory_mb / 1024 * PRICE[architecture] + INVOCATIONS * PRICE["request"]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="lifecycles per memory size and wait, interleaved")
    parser.add_argument("--memory", default=",".join(map(str, MEMORY_MB)), help="sizes in MB, comma-separated")
    parser.add_argument("--aws-wait", default=AWS_WAIT_MS, help=f"modelled ms per call by service ({AWS_WAIT_MS})")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    from _refund_stack import moto_stack

    parse_waits(args.aws_wait)
    with moto_stack("mem") as stack:
        runs, limiter_name = measure(stack, [int(m) for m in args.memory.split(",")], args.rounds, args.aws_wait)
    report(runs, limiter_name, args.rounds, args.aws_wait)
    return 0


def report(runs: Runs, limiter_name: str, rounds: int, aws_wait: str) -> None:
    print(
        f"The router per lifecycle by memory size: {rounds} lifecycles each, interleaved; CPU capped by {limiter_name}"
    )
    print("moto in its own process on 127.0.0.1, uncapped; the refund graph of bench_lifecycle_calls.py")
    rss = max(r["rss"] for rows in runs.values() for r in rows)
    for wait in WAITS:
        if wait == "loopback":
            print("\nAs measured (each AWS call answered by moto on loopback):")
        else:
            print(f"\nEach AWS call the router makes held a modelled round trip more ({aws_wait} ms; an assumption):")
        print(
            f"{'memory':>7}{'CPU share':>10}{'start ms':>10}{'answer ms':>11}{'billed ms':>11}{'GB-s':>10}"
            f"{'$/M x86':>9}{'$/M arm64':>11}{'CPU ms':>8}"
        )
        cost: dict[int, tuple[float, float]] = {}
        for (memory, of_wait), rows in runs.items():
            if of_wait != wait:
                continue
            start, answer, billed_ms = billed(rows)
            cpu = statistics.median(r["start_cpu"] + r["answer_cpu"] for r in rows) * 1000
            gb_s = billed_ms / 1000 * memory / 1024
            x86, arm = lambda_usd(memory, billed_ms) * 1e6, lambda_usd(memory, billed_ms, "arm64") * 1e6
            fits = memory >= rss
            if fits:
                cost[memory] = (x86, arm)
            print(
                f"{memory:>5} MB{cpu_share(memory):>10.3f}{start:>10.1f}{answer:>11.1f}{billed_ms:>11}"
                f"{gb_s:>10.4f}{x86:>9.2f}{arm:>11.2f}{cpu:>8.0f}"
                + ("" if fits else "  (under the peak RSS: would not fit)")
            )
        if cost:
            cheapest = min(cost, key=lambda m: cost[m][0])
            print(
                f"Cheapest that fits: {cheapest} MB (${cost[cheapest][0]:.2f} per million lifecycles on x86, "
                f"${cost[cheapest][1]:.2f} on arm64)."
            )
    print(f"\nThe worker's peak resident memory: {rss:.0f} MB (the router, its graph, boto3, the bench's own calls).")
    print(
        "Billed ms: each invocation's median rounded up to 1 ms, the start's plus the answer's. $/M: GB-s at"
        " $0.0000166667 (x86) or $0.0000133334 (arm64) per GB-second, plus $0.20 per million requests, two a lifecycle."
    )
    print(
        "The arm64 column assumes x86's duration: Graviton was not measured here. CPU ms: the worker's CPU time per"
        " lifecycle including its own send and receive (an upper bound on the router's). This machine's cores are not"
        " Lambda's, and the modelled wait is an assumption, so Lambda's figures differ: the curve's shape is what this"
        " measures."
    )


if __name__ == "__main__":
    raise SystemExit(main())
