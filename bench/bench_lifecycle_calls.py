"""What one question lifecycle (start → ask → answer → resume) costs on the refund stack as synthesized, per door.

Run: uv run --frozen python bench/bench_lifecycle_calls.py [--lifecycles 3] [--rounds 7]

`app.py`'s `RefundAgentStack` is synthesized and deployed on the emulator (`_doors.py`): every announcer and log it
deploys by default, the real Lambda handlers. One lifecycle is driven through each door people and systems answer
by: the entry queue, the answer API (what the inbox page and signed links post to), Slack's buttons (the stack with
`slack=` added) and an email's link. Every AWS call is counted with botocore hooks, by who made it; DynamoDB capacity
units are computed from the sizes of the items each call wrote or read (moto reports none); every log line the
functions print is counted in bytes, as CloudWatch Logs ingests it, with Lambda's own lines and API Gateway's access
log line. Then each door's dollars per million lifecycles at us-east-1 list prices, in a band:

- the router and the answer API are timed as `bench_router_memory.py` times the router: in a worker whose CPU is
  capped at each function's memory share (the template's: the refund router's 320 MB, the API's), each lifecycle
  once as moto answers on loopback (the band's low end), once with a modelled AWS round trip on each call (mid),
  and once with slower replies (high);
- the Slack and email doors add each extra call's round trip to the API door's times (assumed, printed).

The target rows are judged at the band's upper end. The queue door is also priced beside a Step Functions standard
workflow doing the same work. Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository: `examples`
from examples.refund_agent.settings import REFUND_ROUTER_MEMORY_MB  # noqa: F401  (bench_graphs.py reads it here)

from _doors import Lifecycle
from _refund_stack import PRICE, REGION, Call, CallCounter, Stack
from _targets import Target, report_table, report_targets
from bench_router_memory import AWS_WAIT_MS, billed

LIFECYCLES = 3
ROUTER_MEMORY_MB = 512  # the AgentWait construct's router default (bench_graphs.py prices each graph at it)
CAPPED_ROUNDS = 7
"""Lifecycles per wait in the capped worker that times the router (medians)."""

SFN_TRANSITIONS = 5
"""RunAgent (Task: Lambda) → AskFinance (Task: sns:publish.waitForTaskToken) → Decide (Choice) →
IssueRefund (Task: Lambda) → Done (Succeed): five state transitions per lifecycle."""


SLOW_AWS_WAIT_MS = "dynamodb=10,sns=25,s3=30,*=15"
"""The band's upper end: every AWS reply slower than the middle's model (`bench_router_memory.AWS_WAIT_MS`)."""
SLACK_MS = {"low": 50, "mid": 100, "high": 200}
"""Assumed round trip of one Slack Web API call or response-URL post from Lambda (not measured: no Slack here)."""
OTHER_AWS_MS = {"low": 0, "mid": 10, "high": 15}
"""The modelled round trip of an AWS call the timed lifecycle does not make (SES, the email sends table), per band."""
BANDS = ("low", "mid", "high")
MAIN_LOG_BYTES = {"queue": 4_563, "api": 5_594}
"""Log bytes per lifecycle before issue 46's one INFO line per message (this bench on main at 109f604): the most a
lifecycle may log now."""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=LIFECYCLES, help="counted lifecycles per door")
    parser.add_argument("--rounds", type=int, default=CAPPED_ROUNDS, help="capped lifecycles per memory and wait")
    args = parser.parse_args()
    import boto3

    from _doors import DOORS, Emulated, only_channels, refund_template, slack_template, start_slack
    from agent_wait.contract.schema import QUESTION_TABLE

    counter = CallCounter(None, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
    counter.register_everywhere()
    counted: dict[str, list[Lifecycle]] = {}
    with Emulated(refund_template(), counter) as emulated:
        counter.reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=emulated.local.endpoint_url)
        memory = dict(emulated.memory)
        topic_arn = emulated.local.environment.get("AGENT_WAIT_TOPIC_ARN", "")
        bus = emulated.local.environment.get("AGENT_WAIT_BUS_NAME")
        question_table = emulated.local.environment["AGENT_WAIT_TABLE"]
        with only_channels(emulated):
            for door in ("queue", "api"):
                counted[door] = _counted(emulated, door, args.lifecycles)
            timing = _timed(emulated, memory, args.rounds)
        with only_channels(emulated, "email"):  # the emulator's email: one recipient, its sends table
            counted["email"] = _counted(emulated, "email", args.lifecycles)
    with Emulated(slack_template(), counter) as emulated:
        counter.reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=emulated.local.endpoint_url)
        slack = start_slack(emulated)
        try:
            with only_channels(emulated):
                counted["slack"] = _counted(emulated, "slack", args.lifecycles, slack)
        finally:
            slack.stop()

    queue = counted["queue"][-1]
    print(f"The refund stack as synthesized (app.py's RefundAgentStack): announcers {_announcers(topic_arn, bus)};")
    print(f"router {memory['router']} MB, answer API {memory['api']} MB; {args.lifecycles} warm lifecycles per door.")
    for door in DOORS:
        shapes = sorted({len(run.calls) for run in counted[door]})
        print(f"  {door}: calls per lifecycle across runs {shapes}")
    for door in ("queue", "api"):
        print(f"\nThe {door} door, call by call:")
        report(counted[door][-1])
    table = {door: priced(counted[door][-1], timing, memory) for door in DOORS}
    print_doors(table, counted, memory)
    cost(queue.calls, table["queue"])
    targets(queue, table, counted["api"][-1], question_table)
    return 0


def _announcers(topic_arn: str, bus: str | None) -> str:
    named = (["the SNS topic"] if topic_arn else []) + ([f"the EventBridge bus {bus}"] if bus else [])
    return " and ".join(named) or "none"


def _counted(emulated: Any, door: str, lifecycles: int, slack: Any = None) -> list[Lifecycle]:
    """`lifecycles` counted lifecycles through `door`, after one that warms the handlers (their cold start)."""
    emulated.lifecycle(door, 0, slack)
    return [emulated.lifecycle(door, n, slack) for n in range(1, lifecycles + 1)]


@dataclass
class Timing:
    """Billed ms per lifecycle by function and band (`low`: as moto answers on loopback; `mid`: the modelled AWS
    wait; `high`: the slower model), for the queue door and the API door."""

    router: dict[str, dict[str, int]]
    """By door (`queue`, `api`), then band: the router's two invocations, each rounded up to 1 ms."""
    api: dict[str, int]
    """By band: the answer API's one invocation on the API door."""
    limiter: str


def _timed(emulated: Any, memory: dict[str, int], rounds: int) -> Timing:
    """The router and the answer API timed in a worker capped at each one's memory share (`bench_router_memory`)."""
    from bench_router_memory import AWS_WAIT_MS, measure

    local = emulated.local
    env = local.environment
    stack = Stack(
        local.endpoint_url,
        env["AGENT_WAIT_TABLE"],
        env["AGENT_WAIT_CHECKPOINT_TABLE"],
        env["AGENT_WAIT_QUEUE_URL"],
        env["AGENT_WAIT_DLQ_URL"],
        env.get("AGENT_WAIT_TOPIC_ARN", ""),
    )
    router_mb, api_mb = memory["router"], memory["api"]
    router: dict[str, dict[str, int]] = {"queue": {}, "api": {}}
    api: dict[str, int] = {}
    limiter = ""
    waits = ((AWS_WAIT_MS, {"loopback": "low", "modelled": "mid"}), (SLOW_AWS_WAIT_MS, {"modelled": "high"}))
    for wait, bands in waits:
        queue_runs, limiter = measure(stack, [router_mb], rounds, wait)
        api_runs, _ = measure(stack, [router_mb, api_mb], rounds, wait, answer_via="api")
        for measured, band in bands.items():
            router["queue"][band] = billed(queue_runs[router_mb, measured])[2]
            router["api"][band] = billed(api_runs[router_mb, measured])[2]
            api[band] = math.ceil(statistics.median(r["api"] for r in api_runs[api_mb, measured]) * 1000)
    return Timing(router, api, limiter)


@dataclass
class Priced:
    """One door's lifecycle, priced per band: dollars by line, and what each line counts."""

    lifecycle: Lifecycle
    lines: dict[str, dict[str, float]]
    """Line name → band → dollars of one lifecycle."""

    def total(self, band: str) -> float:
        return sum(by_band[band] for by_band in self.lines.values())


def priced(lifecycle: Lifecycle, timing: Timing, memory: dict[str, int]) -> Priced:
    """Every line of one door's lifecycle at list prices, per band; Lambda billed as `timing` measured (the Slack
    and email doors: the API door's times plus each extra call's round trip, `SLACK_MS` and `OTHER_AWS_MS`)."""
    calls = lifecycle.calls
    wru, rru = sum(c.wru for c in calls), sum(c.rru for c in calls)
    sqs = sum(1 for c in calls if c.service == "sqs")
    sns = sum(1 for c in calls if c.service == "sns")
    events = sum(1 for c in calls if c.service == "eventbridge")  # botocore's name for the events API
    fixed = {
        "DynamoDB writes": wru * PRICE["dynamodb_wru"],
        "DynamoDB reads": rru * PRICE["dynamodb_rru"],
        "SQS FIFO requests": sqs * PRICE["sqs_fifo_request"],
        "SNS publishes": sns * PRICE["sns_publish"],
        "EventBridge events": events * PRICE["events_put"],
        "SES emails": lifecycle.emails * PRICE["ses_email"],
        "API Gateway requests": lifecycle.api_requests * PRICE["apigw_http_request"],
        "CloudWatch Logs ingestion": lifecycle.log_bytes * PRICE["logs_ingested_byte"],
    }
    lines = {name: dict.fromkeys(BANDS, usd) for name, usd in fixed.items()}
    door = lifecycle.door if lifecycle.door in ("queue", "api") else "api"
    extra_router_ms, extra_api_ms = _unmeasured_waits(lifecycle)
    router_gb_s, api_gb_s = {}, {}
    for band in BANDS:
        router_ms = timing.router[door][band] + extra_router_ms[band]
        api_ms = (timing.api[band] * lifecycle.api_requests if door == "api" else 0) + extra_api_ms[band]
        router_gb_s[band] = router_ms / 1000 * memory["router"] / 1024
        api_gb_s[band] = api_ms / 1000 * memory["api"] / 1024
    invocations = sum(lifecycle.invocations.values())
    lines["Lambda requests"] = dict.fromkeys(BANDS, invocations * PRICE["lambda_request"])
    lines["Lambda compute"] = {band: (router_gb_s[band] + api_gb_s[band]) * PRICE["lambda_gb_second"] for band in BANDS}
    return Priced(lifecycle, lines)


def _unmeasured_waits(lifecycle: Lifecycle) -> tuple[dict[str, float], dict[str, float]]:
    """Lambda ms the timed lifecycles do not hold: each Slack call (`SLACK_MS`) and each AWS call of a channel the
    timed stack has no part of (SES and the email sends table, `OTHER_AWS_MS`), by function and band."""
    router = dict.fromkeys(BANDS, 0.0)
    api = dict.fromkeys(BANDS, 0.0)
    channel = [c for c in lifecycle.calls if c.service == "sesv2" or "email-sends" in c.resource]
    for band in BANDS:
        router[band] += sum(OTHER_AWS_MS[band] for c in channel if c.role == "router")
        api[band] += sum(OTHER_AWS_MS[band] for c in channel if c.role == "api")
        router[band] += lifecycle.slack_by_role.get("router", 0) * SLACK_MS[band]
        api[band] += lifecycle.slack_by_role.get("api", 0) * SLACK_MS[band]
    return router, api


def print_doors(table: dict[str, Priced], counted: dict[str, list[Lifecycle]], memory: dict[str, int]) -> None:
    """The per-door table, with its band, and what was left out."""
    from _doors import DOOR_NAMES

    print("\nPer door, one lifecycle of the refund stack as synthesized (start → ask → answer → resume):")
    header = f"{'door':<27}{'calls':>6}{'WRU':>6}{'RRU':>6}{'log bytes':>10}{'$/M low':>9}{'$/M mid':>9}{'$/M high':>9}"
    rows = [header]
    for door, priced_door in table.items():
        run = priced_door.lifecycle
        calls = run.calls
        rows.append(
            f"{DOOR_NAMES[door]:<27}{len(calls):>6}{sum(c.wru for c in calls):>6.0f}{sum(c.rru for c in calls):>6.1f}"
            f"{run.log_bytes:>10,}{priced_door.total('low') * 1e6:>9.2f}{priced_door.total('mid') * 1e6:>9.2f}"
            f"{priced_door.total('high') * 1e6:>9.2f}"
        )
    rows.append(
        "storage (retention defaults)  not in this table: the retention bench's row, printed by bench_targets.py"
    )
    report_table(rows)
    print("\nWhere each door's dollars go (per million lifecycles, mid band):")
    names = list(next(iter(table.values())).lines)
    print(f"{'':<27}" + "".join(f"{door:>10}" for door in table))
    for name in names:
        print(f"{name:<27}" + "".join(f"{p.lines[name]['mid'] * 1e6:>10.2f}" for p in table.values()))
    print("\nLog lines per lifecycle, by who wrote them (count, bytes with 26 a line of overhead):")
    for door, priced_door in table.items():
        run = priced_door.lifecycle
        parts = ", ".join(f"{who} {len(lines)} lines {sum(lines):,} B" for who, lines in run.log_lines.items())
        print(f"  {door}: {parts}")
    print(
        "\nBands: low = the router and the API billed as moto answers on loopback; mid = each AWS call held a modelled"
        f" round trip more ({AWS_WAIT_MS} ms); high = slower replies ({SLOW_AWS_WAIT_MS} ms). Each function runs in a"
        f" worker capped at its memory's CPU share (router {memory['router']} MB, API {memory['api']} MB). The Slack"
        f" and email doors reuse the API door's measured times and add each extra call's round trip: Slack"
        f" {SLACK_MS['low']}/{SLACK_MS['mid']}/{SLACK_MS['high']} ms a call, SES and the sends table"
        f" {OTHER_AWS_MS['low']}/{OTHER_AWS_MS['mid']}/{OTHER_AWS_MS['high']} ms (assumed, not measured); the email"
        " link's confirmation page is billed as one more answer. Left out: cold starts, the sweep's minute runs (a"
        " fixed cost: bench_sweep.py), Secrets Manager reads at cold start, KMS requests of AWS managed keys, log"
        " storage after ingestion, and storage of rows and checkpoints (the retention bench's row)."
    )


def report(lifecycle: Lifecycle) -> None:
    """Every AWS call of one lifecycle, by who made it and what it was, with its capacity units."""
    rows: Counter[tuple[str, str]] = Counter()
    units: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for call in lifecycle.calls:
        key = (call.role, f"{call.service}:{call.operation}")
        rows[key] += 1
        units[key][0] += call.wru
        units[key][1] += call.rru
    print(f"{'who':<16}{'call':<34}{'calls':>6}{'WRU':>7}{'RRU':>7}")
    for key, count in sorted(rows.items()):
        wru, rru = units[key]
        print(f"{key[0]:<16}{key[1]:<34}{count:>6}{wru:>7.0f}{rru:>7.1f}")
    calls = lifecycle.calls
    print(f"{'':<16}{'all calls':<34}{len(calls):>6}{sum(c.wru for c in calls):>7.0f}{sum(c.rru for c in calls):>7.1f}")


def cost(calls: list[Call], queue: Priced) -> None:
    """The queue door beside the same work done by a Step Functions standard workflow with a task-token wait."""
    from bench_router_memory import PRICE as LAMBDA_PRICE

    mid = queue.total("mid")
    lambda_usd = queue.lines["Lambda compute"]["mid"] + queue.lines["Lambda requests"]["mid"]
    sfn = SFN_TRANSITIONS * PRICE["sfn_transition"] + lambda_usd + 1 * PRICE["sns_publish"]
    print("\nPrices (us-east-1 list prices; free tiers ignored): DynamoDB on-demand $0.625 per million WRU, $0.125 per")
    print("million RRU; SQS FIFO $0.50 per million requests; SNS $0.50 per million publishes (SQS delivery free);")
    print("EventBridge $1.00 per million events; API Gateway HTTP API $1.00 per million requests; SES $0.10 per 1,000")
    print("emails; CloudWatch Logs $0.50 per GB ingested; Lambda x86 $0.20 per million requests and")
    print(f"${LAMBDA_PRICE['x86_64']:.10f} per GB-s; Step Functions standard $0.025 per 1,000 state transitions.")
    print("Capacity units from item sizes (a write: 1 WRU per KB of the larger of the item before and after, plus its")
    print("index writes; a read: 1 RRU per 4 KB, half when eventually consistent). The event source: one receive and")
    print("one delete per message.")
    print(
        f"\nStep Functions standard, the same work: {SFN_TRANSITIONS} transitions (RunAgent Task → AskFinance Task with"
        " .waitForTaskToken via SNS → Decide Choice → IssueRefund Task → Done Succeed), the same Lambda time, one"
        f" publish: ${sfn * 1e6:.2f} per million; agent-wait's queue door ${mid * 1e6:.2f} (ratio {mid / sfn:.2f})."
    )
    polled = sum(1 for c in calls if c.service == "sqs" and c.operation in ("ReceiveMessage", "DeleteMessage"))
    loaded = len(calls) - polled + polled / 10
    print(
        f"Under load the event source receives and deletes up to 10 messages a call: {loaded:.1f} calls per"
        " lifecycle then (the rows count one message a call, as when traffic is light)."
    )


def targets(queue: Lifecycle, table: dict[str, Priced], api: Lifecycle, question_table: str) -> None:
    """Issue 46's rows (the refund stack as synthesized, per door, at the band's upper end) beside issue 27's."""
    calls = queue.calls
    question_wru = sum(c.wru for c in calls if c.resource == question_table)
    report_targets(
        [
            Target("refund stack as synthesized, queue door: AWS calls per lifecycle", "28", len(calls), 25),
            Target("refund stack as synthesized, queue door: question-table WRU", "16", question_wru, 17),
            Target("refund stack as synthesized, queue door: WRU in all", "24", sum(c.wru for c in calls), 20),
            Target(
                "refund stack as synthesized, queue door: log bytes per lifecycle",
                f"{MAIN_LOG_BYTES['queue']:,}",
                queue.log_bytes,
                MAIN_LOG_BYTES["queue"],
            ),
            Target(
                "refund stack as synthesized, queue door: $ per million, band's upper end",
                "26.5-27.8",
                table["queue"].total("high") * 1e6,
                22,
                decimals=2,
            ),
            Target(
                "refund stack as synthesized, queue door: $ per million, upper end (stretch)",
                "26.5-27.8",
                table["queue"].total("high") * 1e6,
                18,
                decimals=2,
            ),
            Target(
                "refund stack as synthesized, answer API door: log bytes per lifecycle",
                f"{MAIN_LOG_BYTES['api']:,}",
                api.log_bytes,
                MAIN_LOG_BYTES["api"],
            ),
            Target(
                "refund stack as synthesized, answer API door: $ per million, band's upper end",
                "33.7",
                table["api"].total("high") * 1e6,
                26,
                decimals=2,
            ),
        ]
    )
    print("(sweep calls: bench_sweep.py; items read on a long thread: bench_thread_history.py; all: bench_targets.py)")


if __name__ == "__main__":
    raise SystemExit(main())
