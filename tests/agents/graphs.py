"""Small real LangGraph refund graphs for the host tests; the router loads them by `AGENT_WAIT_GRAPH`.

    build_graph             START → prepare → review → finish → END   (one question, auto-approved ≤ 500)
    build_two_step_graph    START → prepare → review → audit → finish → END   (two questions in sequence)
    build_parallel_graph    START → prepare → {review, second_review} → finish → END   (two at once)
    build_no_default_graph  START → prepare → hold → finish → END   (a question with no default)
    build_editable_graph    START → prepare → adjust → finish → END   (an approver may edit the amount)
    build_as_asked_graph    START → prepare → ship → finish → END   (a default policy: no edits)

Each factory takes a checkpointer, as `AGENT_WAIT_GRAPH="tests.agents.graphs:build_graph"` requires.
Side effects are counted here, per order id, so a test can assert that the refund ran exactly 0 or 1
times: `BODY_RUNS` counts executions of `issue_refund`'s body, `REFUNDS` the refunds actually paid
(recorded under an idempotency key, so a re-run body pays nothing twice), `NODE_RUNS` every node
execution. Always import this module as `tests.agents.graphs`, the name the router imports it by.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, NotRequired, TypedDict

from botocore.exceptions import ClientError
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import Field

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

AUTO_APPROVE_LIMIT = 500
"""Refunds up to this amount are approved without asking."""

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject", "reason": "timeout"}, allow_edits=False)
NO_DEFAULT = WaitPolicy(timeout="PT1H", allow_edits=True)

_lock = threading.Lock()
BODY_RUNS: Counter[str] = Counter()
"""Executions of `issue_refund`'s body, by order id (at-least-once: a crash can re-run it)."""
REFUNDS: dict[str, set[str]] = {}
"""Refunds paid, by order id: the set of idempotency keys applied (exactly one per paid order)."""
NODE_RUNS: Counter[tuple[str, str]] = Counter()
"""Executions of each node, by (node, order id); a node that parks counts each time it runs up to `interrupt()`."""
ON_BODY: list[Callable[[str], None]] = []
"""Observers told each time `issue_refund`'s body runs (the crash tests note how many AWS calls preceded it)."""
FAIL_ORDERS: set[str] = set()
"""Order ids whose `prepare` node raises (a graph failure: the router dead-letters the start, never re-runs it)."""
THROTTLE_ORDERS: set[str] = set()
"""Order ids whose `prepare` node hits a throttled AWS call (a store failure: the message is retried)."""
FAIL_AFTER_REFUND: set[str] = set()
"""Order ids whose `review` node raises after `issue_refund` returned (a bug after the side effect: the
resume fails, the thread is failed, and only a retry runs the node again)."""
CRASH_ORDERS: set[str] = set()
"""Order ids whose `prepare` node dies as a Lambda would (a `BaseException`: no outcome, SQS redelivers)."""


class SimulatedCrashError(BaseException):
    """The process dying mid-run (a timeout, out of memory): not an error the router can handle."""


class RefundState(TypedDict):
    order_id: str
    amount: int
    refund: NotRequired[Any]
    audit: NotRequired[Any]
    second: NotRequired[Any]
    hold: NotRequired[Any]
    done: NotRequired[bool]


def _order(state: RefundState) -> str:
    # The fuzz tests start runs with arbitrary JSON objects; the graph takes whatever it is given.
    return str(state.get("order_id", ""))


def _ran(node: str, state: RefundState) -> None:
    with _lock:
        NODE_RUNS[(node, _order(state))] += 1


def pay(order_id: str, idempotency_key: str) -> None:
    """The payment provider: a refund under an idempotency key already used is not paid again."""
    with _lock:
        REFUNDS.setdefault(order_id, set()).add(idempotency_key)


def refunds_paid(order_id: str) -> int:
    with _lock:
        return len(REFUNDS.get(order_id, ()))


def body_runs(order_id: str) -> int:
    with _lock:
        return BODY_RUNS[order_id]


def node_runs(node: str, order_id: str) -> int:
    with _lock:
        return NODE_RUNS[(node, order_id)]


@wait(FINANCE, when=lambda order_id, amount: amount > AUTO_APPROVE_LIMIT)
def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
    """The side effect that must happen at most once per order."""
    with _lock:
        BODY_RUNS[order_id] += 1
    for observer in list(ON_BODY):
        observer(order_id)
    pay(order_id, f"refund:{order_id}")
    return {"status": "refunded", "amount": amount}


@wait(FINANCE)
def close_case(order_id: str) -> dict[str, Any]:
    return {"status": "closed", "order_id": order_id}


@wait(FINANCE)
def notify_customer(order_id: str) -> dict[str, Any]:
    return {"status": "notified", "order_id": order_id}


@wait(NO_DEFAULT)
def hold_order(order_id: str) -> dict[str, Any]:
    return {"status": "released", "order_id": order_id}


def prepare(state: RefundState) -> dict[str, Any]:
    _ran("prepare", state)
    if _order(state) in FAIL_ORDERS:
        raise RuntimeError(f"order {_order(state)} cannot be loaded")
    if _order(state) in CRASH_ORDERS:
        raise SimulatedCrashError(f"the host died running order {_order(state)}")
    if _order(state) in THROTTLE_ORDERS:
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GetItem")
    return {}


def review(state: RefundState) -> dict[str, Any]:
    _ran("review", state)
    refund = issue_refund(_order(state), state.get("amount", 0))
    if _order(state) in FAIL_AFTER_REFUND:
        raise RuntimeError(f"cannot record the refund of order {_order(state)}")
    return {"refund": refund}


def audit(state: RefundState) -> dict[str, Any]:
    _ran("audit", state)
    return {"audit": close_case(_order(state))}


def second_review(state: RefundState) -> dict[str, Any]:
    _ran("second_review", state)
    return {"second": notify_customer(_order(state))}


def hold(state: RefundState) -> dict[str, Any]:
    _ran("hold", state)
    return {"hold": hold_order(_order(state))}


def finish(state: RefundState) -> dict[str, Any]:
    _ran("finish", state)
    return {"done": True}


def _chain(checkpointer: Any, *nodes: Any) -> Any:
    builder = StateGraph(RefundState)
    previous = START
    for node in nodes:
        builder.add_node(node.__name__, node)
        builder.add_edge(previous, node.__name__)
        previous = node.__name__
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer)


def build_graph(checkpointer: Any) -> Any:
    """START → prepare → review → finish: one question, or none for an amount up to the limit."""
    return _chain(checkpointer, prepare, review, finish)


def build_two_step_graph(checkpointer: Any) -> Any:
    """START → prepare → review → audit → finish: asks twice, one question after the other."""
    return _chain(checkpointer, prepare, review, audit, finish)


def build_parallel_graph(checkpointer: Any) -> Any:
    """START → prepare → {review, second_review} → finish: two questions open at once, one per node."""
    builder = StateGraph(RefundState)
    for node in (prepare, review, second_review, finish):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("prepare", "second_review")
    builder.add_edge(["review", "second_review"], "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


def build_no_default_graph(checkpointer: Any) -> Any:
    """START → prepare → hold → finish: a question whose policy has no default (expires with null)."""
    return _chain(checkpointer, prepare, hold, finish)


def ask_raw(state: RefundState) -> dict[str, Any]:
    """A plain `interrupt()` (not through `ask()`) whose value the checkpoint holds but DynamoDB cannot (1e300)."""
    _ran("ask_raw", state)
    return {"hold": interrupt({"order_id": _order(state), "exposure": 1e300 * state.get("amount", 1)})}


@wait(WaitPolicy(timeout="PT1H", allow_edits=True))
def adjust_refund(order_id: str, amount: Annotated[int, Field(gt=0, le=10_000)]) -> dict[str, Any]:
    """Opts in to edits: an approver may change the amount (a whole number from 1 to 10,000) or the order."""
    with _lock:
        BODY_RUNS[order_id] += 1
    return {"status": "refunded", "order_id": order_id, "amount": amount}


def adjust(state: RefundState) -> dict[str, Any]:
    _ran("adjust", state)
    return {"hold": adjust_refund(_order(state), state["amount"])}


def build_editable_graph(checkpointer: Any) -> Any:
    """START → prepare → adjust → finish: `adjust_refund` allows edits, checked against its annotations."""
    return _chain(checkpointer, prepare, adjust, finish)


@wait(WaitPolicy(timeout="PT1H"))
def ship_order(order_id: str) -> dict[str, Any]:
    with _lock:
        BODY_RUNS[order_id] += 1
    return {"status": "shipped", "order_id": order_id}


def ship(state: RefundState) -> dict[str, Any]:
    _ran("ship", state)
    return {"hold": ship_order(_order(state))}


def build_as_asked_graph(checkpointer: Any) -> Any:
    """START → prepare → ship → finish: `ship_order`'s policy is the default, so no answer may edit it."""
    return _chain(checkpointer, prepare, ship, finish)


def build_unstorable_question_graph(checkpointer: Any) -> Any:
    """START → prepare → ask_raw → finish: parks on a question whose value the ledger cannot store."""
    return _chain(checkpointer, prepare, ask_raw, finish)


DRIFT: Counter[str] = Counter()
"""What `drifting_quote` adds to the amount, by order id: a test changes it between the ask and the resume, as a
clock, a random id or a fresh price lookup would."""


def drifting_quote(state: RefundState) -> dict[str, Any]:
    """Computes the amount again on every run (LangGraph re-runs this node on resume), then asks to refund it."""
    _ran("drifting_quote", state)
    order_id = _order(state)
    return {"hold": adjust_refund(order_id, state["amount"] + DRIFT[order_id])}


def build_drifting_graph(checkpointer: Any) -> Any:
    """START → prepare → drifting_quote → finish: the code before the question is not deterministic."""
    return _chain(checkpointer, prepare, drifting_quote, finish)


NOT_A_GRAPH = {"nodes": ["review"]}
"""Something `AGENT_WAIT_GRAPH` can name that is neither a compiled graph nor a factory."""

compiled_graph = build_graph(None)
"""A graph compiled without a checkpointer: `AGENT_WAIT_GRAPH` may name one; the router gives it the table's."""
