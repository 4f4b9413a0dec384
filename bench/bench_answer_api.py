"""The answer API's POST: its AWS calls and capacity units, and its billed time and cost by Lambda memory size.

Run: uv run --frozen python bench/bench_answer_api.py [--rounds 9] [--memory 256,384,512,768,1024]
     [--aws-wait dynamodb=6,sns=15,s3=20,*=10]

On the refund stack of `bench_lifecycle_calls.py` (moto in its own process), the router parks a refund on finance's
question and finance approves it with `POST /questions/{id}/answer` through the answer API's own routes
(`create_app` over `ApiContext.from_settings`, as the Lambda handler serves them):

1. One answer, every AWS call the API makes counted with botocore hooks, with the DynamoDB capacity units it used
   (`_refund_stack.CallCounter`: a transaction's item writes at twice a plain write's units).
2. The API's warm answer by memory size, in a worker process of its own whose CPU is capped at each size's share
   (`_cpu_cap`, as `bench_router_memory.py` caps the router), sizes interleaved round by round; each answer once as
   moto answers on loopback and once with every AWS call held a modelled round trip more (`--aws-wait`, an
   assumption). Parking each question is done uncapped and not timed. Per size: the median answer, billed as Lambda
   bills an invocation (rounded up to 1 ms), and dollars per million answers at x86 and arm64 prices, $0.20 per
   million requests included.

The cold answer at each size (what a person waits for after a quiet spell, and Slack's 3 s) is
`bench_cold_start.py`'s; docs/scaling.md, "The answer API's memory", puts the two together. Figures, not a test: it
exits 0.
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
from collections import Counter
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cpu_cap import cpu_share, limiter
from _refund_stack import PRICE, REGION, CallCounter, moto_stack
from _targets import Target, report_targets
from bench_router_memory import AWS_WAIT_MS, WAITS, parse_waits

MEMORY_MB = (256, 384, 512, 768, 1024)
CALLS_TARGET = 5
"""Issue 46: the answer API's POST takes at most five AWS calls (seven before)."""
FINANCE = {"iss": "https://issuer.example.com", "sub": "u-fin", "email": "fin@example.com", "email_verified": "true"}


def answer_event(question_id: str) -> dict[str, Any]:
    """`POST /questions/{question_id}/answer` as API Gateway's HTTP API hands it to the function, signed in."""
    path = f"/questions/{question_id}/answer"
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": "api.example.com"},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "domainPrefix": "api",
            "http": {
                "method": "POST",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "u",
            },
            "requestId": f"r-{question_id}",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2030:09:00:00 +0000",
            "timeEpoch": int(time.time() * 1000),
            "authorizer": {"jwt": {"claims": FINANCE, "scopes": None}},
        },
        "body": json.dumps({"answer": {"action": "approve"}}),
        "isBase64Encoded": False,
    }


class Answers:
    """The router that parks refunds and the answer API that approves them, on one moto stack."""

    def __init__(self, api_session: Any) -> None:
        from agent_wait.host import HostSettings, build_router
        from agent_wait.host.api import ApiContext, create_app

        self.router = build_router(HostSettings.from_env("router"))
        context = ApiContext.from_settings(HostSettings.from_env("api"), session=api_session)
        self.app = create_app(lambda: context)
        self.serial = 0

    def park(self) -> str:
        """A fresh refund parked on finance's question (the router's work: never billed to the API)."""
        self.serial += 1
        thread_id = f"order-{os.getpid()}-{self.serial}"
        start = {"thread_id": thread_id, "input": {"order_id": thread_id, "amount": 900}}
        (question_id,) = self.router.handle(json.dumps(start)).asked
        return question_id

    def answer(self, question_id: str) -> dict[str, Any]:
        response = self.app.resolve(answer_event(question_id), {})
        if response["statusCode"] != 200:
            raise RuntimeError(f"the answer was not decided: {response['statusCode']} {response.get('body')}")
        return response


# -- the worker: the API in a process of its own -----------------------------------------------------------------


def worker() -> int:
    """Park on `park`; answer the last parked question on `run <wait>` and print its timings."""
    import boto3

    waits = parse_waits(os.environ["BENCH_AWS_WAIT"])
    waiting = {"on": False}

    def round_trip(event_name: str, **_: Any) -> None:
        if waiting["on"]:
            service = event_name.split(".")[1]
            time.sleep(waits.get(service, waits.get("*", 0.0)))

    aws = {"waited": 0.0, "sent": 0.0}  # the API makes its calls one after another, on one thread

    def sent(**_: Any) -> None:
        aws["sent"] = time.perf_counter()

    def answered(**_: Any) -> None:  # the reply is in, not parsed yet: moto's time and the wire's
        aws["waited"] += time.perf_counter() - aws["sent"]

    session = boto3.Session(region_name=REGION)  # the API's: only its calls wait the model
    session.events.register("before-send.*.*", sent)  # first: the modelled wait counts as AWS's
    session.events.register("before-send.*.*", round_trip)
    session.events.register("before-parse.*.*", answered)
    answers = Answers(session)
    answers.answer(answers.park())  # warm: routes, clients and connections exist, as in a warm Lambda
    print("ready", flush=True)
    parked = ""
    for line in sys.stdin:
        command, _, wait = line.strip().partition(" ")
        if command == "park":
            parked = answers.park()
            print("parked", flush=True)
        elif command == "run":
            waiting["on"], aws["waited"] = wait == "modelled", 0.0
            cpu, started = time.process_time(), time.perf_counter()
            answers.answer(parked)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            waiting["on"] = False
            print(json.dumps({"answer": wall, "cpu": cpu, "aws": aws["waited"]}), flush=True)
        else:
            break
    return 0


Runs = dict[tuple[int, str], list[dict[str, float]]]


def measure_memory(sizes: list[int], rounds: int, aws_wait: str) -> tuple[Runs, str]:
    """`rounds` answers per size and wait, interleaved, in a capped worker on the stack `moto_stack` set up."""
    runs: Runs = {(m, w): [] for m in sizes for w in WAITS}
    env = {**os.environ, "BENCH_AWS_WAIT": aws_wait}
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

    def ask(command: str) -> str:
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(command + "\n")
        child.stdin.flush()
        return child.stdout.readline()

    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the answer API's worker did not start")
        cap.add(child.pid)
        for _ in range(rounds):
            for memory in sizes:
                for wait in WAITS:
                    ask("park")  # uncapped: the router's work
                    with cap.cap(memory):
                        runs[memory, wait].append(json.loads(ask(f"run {wait}")))
    finally:
        if child.poll() is None:
            child.stdin.close()
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
        cap.close()
    return runs, cap.name


def usd_per_million(memory_mb: int, billed_ms: int, architecture: str = "x86_64") -> float:
    """Dollars of a million answers: GB-seconds at `memory_mb` for `billed_ms` each, and the request price."""
    key = "lambda_gb_second" if architecture == "x86_64" else "lambda_gb_second_arm64"
    return (billed_ms / 1000 * memory_mb / 1024 * PRICE[key] + PRICE["lambda_request"]) * 1e6


def count_calls() -> tuple[list[Any], int]:
    """One answer's AWS calls with their capacity units, and the API's default memory."""
    import boto3

    from agent_wait.contract.schema import QUESTION_TABLE

    session = boto3.Session(region_name=REGION)
    reader = boto3.client("dynamodb", region_name=REGION)
    counter = CallCounter(reader, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
    counter.register(session)
    answers = Answers(session)
    answers.answer(answers.park())  # warm
    question_id = answers.park()
    begin = counter.mark()
    answers.answer(question_id)
    return counter.calls[begin:], api_default_memory()


def api_default_memory() -> int:
    """The answer API function's memory as `AnswerApiProps` defaults it."""
    from agent_wait_cdk import AnswerApiProps

    return AnswerApiProps().memory_size


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="answers per memory size and wait, interleaved")
    parser.add_argument("--memory", default=",".join(map(str, MEMORY_MB)), help="sizes in MB, comma-separated")
    parser.add_argument("--aws-wait", default=AWS_WAIT_MS, help=f"modelled ms per call by service ({AWS_WAIT_MS})")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    parse_waits(args.aws_wait)
    sizes = [int(m) for m in args.memory.split(",")]
    with moto_stack("api") as _:
        calls, default_mb = count_calls()
        runs, limiter_name = measure_memory(sizes, args.rounds, args.aws_wait)
    print("The answer API's POST /questions/{id}/answer on the refund stack (moto in its own process)")
    print(f"  machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    by_operation = Counter(f"{c.service}.{c.operation}" for c in calls)
    print(f"\n  AWS calls of one answer: {len(calls)}")
    for call in calls:
        units = f"{call.wru:g} WRU" if call.wru else (f"{call.rru:g} RRU" if call.rru else "")
        print(f"    {call.service}.{call.operation:<22} {units}")
    print(f"  by operation: {dict(by_operation)}; {sum(c.wru for c in calls):g} WRU, {sum(c.rru for c in calls):g} RRU")
    report_memory(runs, limiter_name, args.rounds, args.aws_wait, default_mb)
    report_targets([Target("answer API POST, AWS calls", "7", len(calls), CALLS_TARGET)])
    return 0


def report_memory(runs: Runs, limiter_name: str, rounds: int, aws_wait: str, default_mb: int) -> None:
    print(f"\n  the warm answer by memory size: {rounds} answers each, interleaved; CPU capped by {limiter_name}")
    for wait in WAITS:
        label = "as measured (moto on loopback)" if wait == "loopback" else f"each call held {aws_wait} ms more"
        print(f"\n  {label}:")
        print(f"  {'memory':>8}{'CPU share':>10}{'answer ms':>11}{'spread':>15}{'billed ms':>11}{'$/M x86':>9}"
              f"{'$/M arm64':>11}{'CPU ms':>8}{'AWS ms':>8}")  # fmt: skip
        for memory in sorted({m for m, w in runs if w == wait}):
            rows = runs[memory, wait]
            answer = statistics.median(r["answer"] for r in rows) * 1000
            spread = f"{min(r['answer'] for r in rows) * 1000:.0f}-{max(r['answer'] for r in rows) * 1000:.0f}"
            billed_ms = math.ceil(answer)
            cpu = statistics.median(r["cpu"] for r in rows) * 1000
            aws = statistics.median(r["aws"] for r in rows) * 1000
            mark = "  (the default)" if memory == default_mb else ""
            print(f"  {memory:>5} MB{cpu_share(memory):>10.3f}{answer:>11.1f}{spread:>15}{billed_ms:>11}"
                  f"{usd_per_million(memory, billed_ms):>9.2f}{usd_per_million(memory, billed_ms, 'arm64'):>11.2f}"
                  f"{cpu:>8.0f}{aws:>8.0f}{mark}")  # fmt: skip
    print(
        "\n  AWS ms: the time from sending each call to its reply, summed (moto's own time on this machine, and the"
        " modelled wait when it is on; moto's transactions are slow). Billed ms: the median answer rounded up to 1 ms."
        " $/M: GB-s at $0.0000166667 (x86) or $0.0000133334 (arm64) per GB-second plus $0.20 per million requests."
        " This machine's cores are not Lambda's and the modelled wait is"
        " an assumption: the curve's shape is what this measures."
    )


if __name__ == "__main__":
    raise SystemExit(main())
