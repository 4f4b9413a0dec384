"""What standing grants cost (issue 43): nothing for a policy without grants; with grants, at most one Query at ask
time and one conditional write per use, plus the decision.

Run: uv run --frozen python bench/bench_grants.py

The refund stack as synthesized runs on the emulator (`_doors.py`), its AWS calls counted by who made them, with
DynamoDB write and read units from item sizes (`_refund_stack.CallCounter`). A call that reads or writes the grants'
partition (`pk = GRANTS`) is counted apart. Four figures:

- a whole refund lifecycle (start, ask, answer on the entry queue, resume) under a policy without grants, the bench's
  own refund graph: its calls and units, and no call on the grants' partition;
- an ask under a policy that allows grants (`tests.agents.grant_graphs.GRANTING`) while no grant covers it: the one
  consistent Query for live grants, then the question asked as usual;
- the answer API's approval that makes a grant: one conditional write more than a plain approval;
- an ask a live grant decides: the Query, the one conditional write that takes a use, and the decision, in the one
  delivery of the start (no answer message, nobody asked).

Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository: `tests`, `examples`

from _refund_stack import Call, CallCounter
from _targets import Target, report_table, report_targets
from bench_router_memory import APPROVER

GRANTED_GRAPH = "tests.agents.grant_graphs:build_granted_refund_graph"
GRANTS_PARTITION = {"S": "GRANTS"}
UP_TO_500 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}
BEFORE_CALLS, BEFORE_WRU = 25, 20
"""The refund lifecycle of a policy without grants as bench_lifecycle_calls measures it (issue 46: 25 calls; 20 WRU
since a checkpoint's payload rides in its head item): a policy without grants must add nothing to it."""


class GrantCalls:
    """A botocore hook: the DynamoDB operations, by name, that touched the grants' partition while a role ran."""

    def __init__(self, counter: CallCounter) -> None:
        self.counter = counter
        self.seen: Counter[str] = Counter()

    def register_everywhere(self) -> None:
        import botocore.handlers

        botocore.handlers.BUILTIN_HANDLERS.append(("before-parameter-build.dynamodb", self.before))

    def before(self, event_name: str, params: dict[str, Any], **_: Any) -> None:
        if not (self.counter.counting and self.counter.role):  # the counter's own sizing reads are not the stack's
            return
        values = params.get("ExpressionAttributeValues") or {}
        keys = (params.get("Key") or params.get("Item") or {}).get("pk"), values.get(":pk")
        if GRANTS_PARTITION in keys:
            self.seen[event_name.split(".")[2]] += 1


class Phase:
    """What one step cost: its calls (by role) and the grant partition's share of them."""

    def __init__(self, name: str, calls: list[Call], grants: Counter[str]) -> None:
        self.name, self.calls, self.grants = name, calls, grants

    @property
    def wru(self) -> float:
        return sum(call.wru for call in self.calls)

    @property
    def rru(self) -> float:
        return sum(call.rru for call in self.calls)

    def line(self) -> str:
        by_role = Counter(call.role for call in self.calls)
        roles = ", ".join(f"{role} {count}" for role, count in sorted(by_role.items()))
        on_grants = ", ".join(f"{op} {n}" for op, n in sorted(self.grants.items())) or "none"
        return f"{self.name:54} {len(self.calls):>5} {self.wru:>6.1f} {self.rru:>6.1f}   {on_grants:22} {roles}"


def measure(name: str, counter: CallCounter, grants: GrantCalls, step: Callable[[], Any]) -> Phase:
    counter.calls.clear()
    grants.seen.clear()
    step()
    return Phase(name, list(counter.calls), Counter(grants.seen))


def main() -> int:
    import boto3

    from _doors import Emulated, only_channels, refund_template
    from agent_wait.contract.schema import QUESTION_TABLE

    counter = CallCounter(None, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
    counter.register_everywhere()
    grants = GrantCalls(counter)
    grants.register_everywhere()
    with Emulated(refund_template(), counter) as emulated, only_channels(emulated):  # as bench_lifecycle_calls
        counter.reader = boto3.client("dynamodb", endpoint_url=emulated.local.endpoint_url, region_name="us-east-1")
        emulated.lifecycle("queue", 0)  # warms the handlers (their cold start is not a lifecycle's)
        without = measure(
            "lifecycle, policy without grants (queue door)", counter, grants, lambda: emulated.lifecycle("queue", 1)
        )

        emulated.local.use_agent(GRANTED_GRAPH)  # the refund graph under GRANTING, deployed as a new router is

        def start(thread: str, amount: int) -> None:
            emulated._send({"thread_id": thread, "input": {"order_id": thread, "amount": amount}}, thread)
            emulated._route()

        start("g-warm", 100)  # the new router's cold start
        asked = measure("ask, policy with grants, none live (start)", counter, grants, lambda: start("g-first", 100))
        question = emulated._asked("g-first")
        body = {"answer": {"action": "approve", "grant": UP_TO_500}}
        granting = measure(
            "approve and grant (answer API)",
            counter,
            grants,
            lambda: emulated._api("POST", f"/questions/{question}/answer", body, claims=APPROVER),
        )
        emulated._route()  # the resume
        decided = measure("ask decided by the grant (start)", counter, grants, lambda: start("g-second", 200))

    phases = (without, asked, granting, decided)
    report_table(
        [
            "\nStanding grants: AWS calls, write and read units per step (grants' partition calls counted apart)",
            f"{'step':54} {'calls':>5} {'WRU':>6} {'RRU':>6}   {'on the grants':22} by role",
            *(phase.line() for phase in phases),
        ]
    )
    grant_writes = decided.grants["UpdateItem"] + decided.grants["PutItem"]
    report_targets(
        [
            Target("refund lifecycle without grants: AWS calls", str(BEFORE_CALLS), len(without.calls), BEFORE_CALLS),
            Target("refund lifecycle without grants: WRU", str(BEFORE_WRU), without.wru, BEFORE_WRU, decimals=1),
            Target("refund lifecycle without grants: calls on grants", "-", sum(without.grants.values()), 0),
            Target("ask decided by a grant: grant Queries", "-", decided.grants["Query"], 1),
            Target("ask decided by a grant: grant writes per use", "-", grant_writes, 1),
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
