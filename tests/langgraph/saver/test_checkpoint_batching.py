"""The router's checkpoint saver writes one `BatchWriteItem` per step and reads a checkpoint once per message,
without giving up a finished task's writes: parallel branches and crashes are the cases that matter.

The graphs run through `LangGraphAdapter` (as the router runs them) on the saver `checkpoint_saver` builds, on
the moto server. A botocore hook on the saver's session counts its calls and, once armed, fails every call the
way a dead process makes none: `Crash` is a BaseException, as Lambda dying is not an error the code handles.
"""

from __future__ import annotations

import operator
import threading
import time
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict
from uuid import uuid4

import boto3
import pytest
from langgraph.channels.delta import DeltaChannel
from tests.support.aws_stack import REGION, create_checkpoint_table

from agent_wait.engine.lease import hold_thread
from agent_wait.errors import ThreadStateUnavailableError
from agent_wait.host import checkpoint_saver
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.langgraph.checkpoint.batch import BatchWriter, Held, StepBatch
from agent_wait.langgraph.checkpoint.notes import NOTE_WRITES_LIMIT, LatestKeys
from agent_wait.ledger import InMemoryLedger


class Crash(BaseException):
    """The process died: every AWS call from now on fails, and the run stops where it is."""


class Calls:
    """Every AWS call the saver makes, by operation; `dead` makes each one raise `Crash`."""

    def __init__(self) -> None:
        self.made: list[str] = []
        self.dead = False
        self._lock = threading.Lock()

    def __call__(self, event_name: str, **_: Any) -> None:
        if self.dead:
            raise Crash(event_name)
        with self._lock:
            self.made.append(event_name.split(".")[2])

    def take(self) -> list[str]:
        with self._lock:
            made, self.made = self.made, []
        return made


@pytest.fixture
def saver_calls(moto_server: str, unique: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Calls]:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    table = f"checkpoints-{unique}"
    create_checkpoint_table(boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server), table)
    session = boto3.Session(region_name=REGION)
    calls = Calls()
    session.events.register("before-call.*.*", calls)
    return checkpoint_saver(table, session), calls


# -- a linear graph: one call per step ----------------------------------------------------------------------


class Line(TypedDict):
    log: Annotated[list[str], operator.add]


def _linear(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(Line)
    builder.add_sequence([(name, lambda state, name=name: {"log": [name]}) for name in ("a", "b", "c")])
    builder.add_edge(START, "a")
    builder.add_edge("c", END)
    return builder.compile(checkpointer=saver)


def _stored(saver: Any, thread_id: str) -> list[str]:
    """The kinds of item the thread has in the table: `checkpoint <step>` and `writes <step>` (payloads left out)."""
    steps: dict[str, int] = {}
    for found in saver.list({"configurable": {"thread_id": thread_id}}):
        steps[found.config["configurable"]["checkpoint_id"]] = found.metadata["step"]
    kinds = []
    for item in saver.client.scan(TableName=saver.table_name)["Items"]:
        pk = item["PK"]["S"]
        if pk.startswith(f"CHECKPOINT_{thread_id}"):
            kinds.append(f"checkpoint {steps[item['id']['S']]}")
        elif pk.startswith(f"WRITES_{thread_id}#"):
            kinds.append(f"writes {steps.get(pk.rsplit('#', 1)[1], '?')}")
    return sorted(kinds)


def test_a_linear_run_saves_each_step_a_task_starts_from_in_one_batch_write(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    saver, calls = saver_calls
    adapter = LangGraphAdapter(_linear(saver))
    adapter.start(f"t-{unique}", {"log": []})
    # One read of the (empty) thread. The input checkpoint and step 0's wait while only the input is held; b and c
    # each start after the checkpoint that holds the task before them, and the last one goes when the run ends.
    assert calls.take() == ["Query", "BatchWriteItem", "BatchWriteItem", "BatchWriteItem"]
    state = adapter.graph.get_state(adapter.config(f"t-{unique}"))
    assert state.values == {"log": ["a", "b", "c"]}
    assert not state.next
    history = list(adapter.graph.get_state_history(adapter.config(f"t-{unique}")))
    assert [h.metadata["step"] for h in history] == [3, 2, 1]  # the checkpoints b and c started from, and the last
    # Each task's writes were replaced by the checkpoint after them, in the batch they waited in.
    assert _stored(saver, f"t-{unique}") == ["checkpoint 1", "checkpoint 2", "checkpoint 3"]


def _extend(log: list[str], batches: list[list[str]]) -> list[str]:
    return [*log, *(entry for batch in batches for entry in batch)]


class Deltas(TypedDict):
    log: Annotated[list[str], DeltaChannel(_extend)]


def test_a_graph_with_a_delta_channel_keeps_every_checkpoint_and_write(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    """A `DeltaChannel`'s value is rebuilt from the writes of earlier checkpoints: none may be left out."""
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(Deltas)
    builder.add_sequence([(name, lambda state, name=name: {"log": [name]}) for name in ("a", "b", "c")])
    builder.add_edge(START, "a")
    builder.add_edge("c", END)
    saver, _ = saver_calls
    adapter = LangGraphAdapter(builder.compile(checkpointer=saver))
    adapter.start(f"t-{unique}", {"log": ["in"]})
    assert adapter.graph.get_state(adapter.config(f"t-{unique}")).values == {"log": ["in", "a", "b", "c"]}
    history = list(adapter.graph.get_state_history(adapter.config(f"t-{unique}")))
    assert [h.metadata["step"] for h in history] == [3, 2, 1, 0, -1]
    assert [kind for kind in _stored(saver, f"t-{unique}") if kind.startswith("writes")] == [
        "writes -1",
        "writes 0",
        "writes 1",
        "writes 2",
    ]


def test_the_saver_used_without_the_adapter_writes_each_save_at_once(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    """Nothing watches the run's tasks, so nothing is held back: each save is one write, head and payload together."""
    saver, calls = saver_calls
    _linear(saver).invoke({"log": []}, {"configurable": {"thread_id": f"t-{unique}"}}, durability="sync")
    made = calls.take()
    assert made.count("BatchWriteItem") == 9  # 5 checkpoints, 4 tasks' writes
    assert "PutItem" not in made


# -- parallel branches: a finished sibling's writes land before the other can die --------------------------------


class Fork(TypedDict):
    log: Annotated[list[str], operator.add]


PAID: list[str] = []
"""Each run of `pay`'s body: the side effect that must happen once."""


def _fork(saver: Any, calls: Calls, *, crash: threading.Event, paid: threading.Event, slow_starts_late: bool) -> Any:
    from langgraph.graph import END, START, StateGraph

    def pay(state: Fork) -> dict[str, Any]:
        PAID.append("paid")
        paid.set()
        return {"log": ["pay"]}

    def slow(state: Fork) -> dict[str, Any]:
        paid.wait(5)
        time.sleep(0.3)  # `pay` finished a while ago; its writes had time to land
        if crash.is_set():
            calls.dead = True
            raise Crash("the process died while slow ran")
        return {"log": ["slow"]}

    builder = StateGraph(Fork)
    builder.add_node("pay", pay)
    builder.add_node("slow", slow)
    builder.add_node("join", lambda state: {"log": ["join"]})
    builder.add_edge(START, "pay")
    if slow_starts_late:  # slow's own step starts only after pay's: nothing runs beside pay
        builder.add_node("wait", lambda state: {"log": ["wait"]})
        builder.add_edge(START, "wait")
        builder.add_edge("wait", "slow")
        builder.add_edge(["pay", "slow"], "join")
    else:
        builder.add_edge(START, "slow")
        builder.add_edge(["pay", "slow"], "join")
    builder.add_edge("join", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
@pytest.mark.parametrize("slow_starts_late", [False, True], ids=["side-by-side", "crash-in-a-later-step"])
def test_a_sibling_that_finished_is_not_run_again_when_the_process_dies_in_another_branch(
    saver_calls: tuple[Any, Calls], unique: str, slow_starts_late: bool, use_async: bool
) -> None:
    saver, calls = saver_calls
    crash, paid = threading.Event(), threading.Event()
    crash.set()
    PAID.clear()
    graph = _fork(saver, calls, crash=crash, paid=paid, slow_starts_late=slow_starts_late)
    adapter = LangGraphAdapter(graph, use_async=use_async)
    thread_id = f"t-{unique}"
    with pytest.raises(Crash):
        adapter.start(thread_id, {"log": []})
    assert PAID == ["paid"]

    # Redelivery, on a process that lives: the run goes on from the last checkpoint and its saved writes.
    calls.dead = False
    crash.clear()
    adapter.continue_run(thread_id)
    state = adapter.graph.get_state(adapter.config(thread_id))
    assert PAID == ["paid"], "pay's writes were lost with the crash, so its side effect ran again"
    assert sorted(state.values["log"]) == sorted(["pay", "slow", "join"] + (["wait"] if slow_starts_late else []))


class _Recorder(BatchWriter):
    """Records each write as the PKs of its items."""

    def __init__(self) -> None:
        super().__init__(None, "table")
        self.written: list[list[str]] = []

    def write(self, items: Any, *, thread_id: str) -> None:
        self.written.append([item["PK"]["S"] for item in items])


def _checkpoint(checkpoint_id: str, parent_id: str | None, *, ref_loc: str = "DYNAMODB") -> Held:
    item = {"PK": {"S": f"CHECKPOINT_{checkpoint_id}"}, "SK": {"S": "x"}, "ref_loc": {"S": ref_loc}}
    return Held([item], "", checkpoint_id, parent_id=parent_id)


def _writes(checkpoint_id: str, task: str) -> Held:
    return Held([{"PK": {"S": f"WRITES_{checkpoint_id}_{task}"}, "SK": {"S": "0"}}], "", checkpoint_id)


def test_writes_held_back_land_before_the_next_task_starts() -> None:
    """The step batch on its own: what a finished task wrote goes out when another task starts, before it returns."""
    recorder = _Recorder()
    batch = StepBatch("t", recorder)
    batch.hold(_checkpoint("0", None))
    batch.task_started(first := uuid4())
    assert recorder.written == [], "only the run's input is held: the task may start without it"
    batch.task_ended(first)
    batch.hold(_writes("0", "a"))
    assert recorder.written == []
    batch.task_started(sibling := uuid4())
    assert recorder.written == [["CHECKPOINT_0", "WRITES_0_a"]], "a finished task's writes land first"
    batch.hold(_writes("0", "b"))
    assert recorder.written[-1] == ["WRITES_0_b"], "a task is running: nothing may wait"
    batch.task_ended(sibling)
    batch.hold(_writes("0", "c"))
    batch.write_now([{"PK": {"S": "INTERRUPT"}, "SK": {"S": "0"}}])
    assert recorder.written[-1] == ["WRITES_0_c", "INTERRUPT"]


def test_a_checkpoint_replaces_the_held_writes_and_checkpoint_before_it() -> None:
    recorder = _Recorder()
    batch = StepBatch("t", recorder)
    batch.hold(_checkpoint("0", None))
    batch.hold(_writes("0", "a"))
    batch.hold(_writes("other", "a"))
    batch.hold(_checkpoint("1", "0"))
    batch.flush()
    assert recorder.written == [["WRITES_other_a", "CHECKPOINT_1"]]

    uncompacted = StepBatch("t", recorder, compact=False)
    uncompacted.hold(_checkpoint("0", None))
    uncompacted.hold(_writes("0", "a"))
    uncompacted.hold(_checkpoint("1", "0"))
    uncompacted.flush()
    assert recorder.written[-1] == ["CHECKPOINT_0", "WRITES_0_a", "CHECKPOINT_1"]

    batch.hold(_checkpoint("2", None, ref_loc="S3"))
    batch.hold(_checkpoint("3", "2"))
    batch.flush()
    assert recorder.written[-1] == ["CHECKPOINT_2", "CHECKPOINT_3"], "its payload is in S3 already: its head stays"


def test_a_read_in_a_namespace_writes_what_is_held_there_first() -> None:
    recorder = _Recorder()
    batch = StepBatch("t", recorder)
    batch.hold(_checkpoint("0", None))
    batch.flush("child")
    assert recorder.written == []
    batch.flush("")
    assert recorder.written == [["CHECKPOINT_0"]]


# -- reads: once per message, never stale ----------------------------------------------------------------------


def ledger_clock() -> Any:
    from agent_wait.common.times import utc_now

    return utc_now()


def _delivery(ledger: Any, thread_id: str) -> Any:
    return hold_thread(ledger, thread_id, clock=ledger_clock, seconds=60, wait=0, on_busy=lambda: None, log=None)


def _ran_linear(saver: Any, thread_id: str) -> tuple[Any, dict[str, Any]]:
    """`_linear` on `saver`, run to its end once on `thread_id` (outside any lease); the graph and its config."""
    graph = _linear(saver)
    config = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"log": []}, config, durability="sync")
    return graph, config


def test_the_latest_checkpoint_is_read_once_while_the_thread_is_held_and_again_after_a_write(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    saver, calls = saver_calls
    thread_id = f"t-{unique}"
    graph, config = _ran_linear(saver, thread_id)
    calls.take()

    ledger = InMemoryLedger()
    with _delivery(ledger, thread_id):
        first = graph.get_state(config)
        second = graph.get_state(config)
        assert calls.take().count("Query") == 2  # the checkpoint and its writes, once
        assert second.values == first.values == {"log": ["a", "b", "c"]}
        second.values["log"].append("changed by the caller")
        assert graph.get_state(config).values == {"log": ["a", "b", "c"]}, "a reused read is a copy"
        graph.update_state(config, {"log": ["d"]})
        calls.take()
        assert graph.get_state(config).values["log"][-1] == "d"
        # Read again after a write of ours: the head, which holds its payload (the update left no writes to read).
        assert calls.take() == ["Query"], "after a write of ours the checkpoint is read again"
    graph.get_state(config)
    graph.get_state(config)
    assert calls.take().count("Query") == 4, "without the thread's lease nothing is remembered"
    with _delivery(ledger, thread_id):
        graph.get_state(config)
        # A new delivery reads again (another may have written between): the head, which holds its payload, by the
        # keys the delivery before it left (no writes to read).
        assert calls.take() == ["Query"]


def test_a_read_made_while_a_write_is_on_its_way_is_not_remembered(saver_calls: tuple[Any, Calls], unique: str) -> None:
    saver, _ = saver_calls
    thread_id = f"t-{unique}"
    graph, config = _ran_linear(saver, thread_id)
    send = saver.writer.write

    def read_then_send(items: Any, *, thread_id: str) -> None:
        saver.get_tuple(config)  # another reader, before the items land
        send(items, thread_id=thread_id)

    ledger = InMemoryLedger()
    with _delivery(ledger, thread_id):
        saver.writer.write = read_then_send
        graph.update_state(config, {"log": ["d"]})
        saver.writer.write = send
        assert graph.get_state(config).values["log"] == ["a", "b", "c", "d"]


def test_a_warm_saver_keeps_read_tokens_for_a_bounded_number_of_threads(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    """A warm router sees many threads; what it keeps to know a read is current must not grow with them."""
    from agent_wait.langgraph.checkpoint.saver import VERSIONS_KEPT

    saver, calls = saver_calls
    thread_id = f"t-{unique}"
    graph, config = _ran_linear(saver, thread_id)
    ledger = InMemoryLedger()
    with _delivery(ledger, thread_id):
        graph.get_state(config)
        calls.take()
        for n in range(VERSIONS_KEPT + 10):  # other threads' reads in the same warm process
            with saver._lock:
                saver._version(f"other-{n}")
        assert len(saver._versions) <= VERSIONS_KEPT
        graph.get_state(config)
        assert calls.take() == ["Query"], "once its token is dropped, a remembered read is read again"


# -- the note a delivery leaves: the next one reads the checkpoint in two calls -----------------------------------


def _asking(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def ask(state: Line) -> dict[str, Any]:
        return {"log": [f"answer:{interrupt({'question_id': 'q-1', 'prompt': 'ok?'})}"]}

    builder = StateGraph(Line)
    builder.add_sequence([("prepare", lambda state: {"log": ["prepare"]}), ("ask", ask)])
    builder.add_edge(START, "prepare")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


@dataclass
class Asked:
    """A thread whose first delivery started `_asking` and parked on its question, with the lease's ledger."""

    adapter: LangGraphAdapter
    ledger: InMemoryLedger
    thread_id: str
    calls: Calls

    def delivery(self) -> Any:
        return _delivery(self.ledger, self.thread_id)

    def state(self) -> Any:
        return self.adapter.graph.get_state(self.adapter.config(self.thread_id))

    def read_in_a_delivery(self) -> list[str]:
        """The calls of a new delivery's read of the thread's checkpoint."""
        self.calls.take()
        with self.delivery():
            self.state()
            return self.calls.take()


@pytest.fixture
def asked(saver_calls: tuple[Any, Calls], unique: str) -> Asked:
    saver, calls = saver_calls
    parked = Asked(LangGraphAdapter(_asking(saver)), InMemoryLedger(), f"t-{unique}", calls)
    with parked.delivery():
        parked.adapter.start(parked.thread_id, {"log": []})
    return parked


def test_the_next_delivery_reads_the_checkpoint_by_the_keys_the_last_one_left(asked: Asked) -> None:
    asked.calls.take()
    with asked.delivery():
        noted = asked.state()
        assert asked.calls.take() == ["Query", "BatchGetItem"], "the writes' heads are read by key, with the payloads"
    read = asked.state()
    assert asked.calls.take() == ["Query", "Query"]
    assert noted == read
    assert [i.value for t in noted.tasks for i in t.interrupts] == [{"question_id": "q-1", "prompt": "ok?"}]


def test_a_note_read_through_an_answer_resumes_the_thread(asked: Asked) -> None:
    (question,) = asked.adapter.pending(asked.thread_id)
    asked.calls.take()
    with asked.delivery():
        run = asked.adapter.resume(asked.thread_id, question.question_id, "yes")
    assert asked.calls.take()[:2] == ["Query", "BatchGetItem"]
    assert run.result["log"] == ["prepare", "answer:yes"]
    assert not asked.state().next


def test_a_delivery_that_dies_holding_the_thread_leaves_no_note_for_the_next(asked: Asked) -> None:
    # A delivery takes the lease (and with it the note), then dies: its lease runs out unreleased.
    assert asked.ledger.acquire_lease(asked.thread_id, "dead", now=ledger_clock(), seconds=-1) is not None
    assert asked.read_in_a_delivery() == ["Query", "Query"]


def test_a_delivery_that_never_read_the_thread_leaves_no_note(asked: Asked) -> None:
    """It cannot vouch for the note it took (an async run's reads happen where the lease is not seen)."""
    with asked.delivery():
        pass  # a message refused before the agent ran
    assert asked.read_in_a_delivery() == ["Query", "Query"]


def test_a_checkpoint_written_without_the_lease_is_read_whole_despite_the_note(asked: Asked) -> None:
    asked.adapter.graph.update_state(asked.adapter.config(asked.thread_id), {"log": ["from a notebook"]})
    assert asked.read_in_a_delivery() == ["Query", "Query"], "the latest head is not the noted one"
    assert asked.state().values["log"] == ["prepare", "from a notebook"]


def test_a_delivery_whose_checkpoint_write_failed_leaves_no_note(asked: Asked) -> None:
    def update_that_fails() -> None:
        with asked.delivery():
            asked.state()
            asked.calls.dead = True  # the update's write fails (part of it may have landed)
            asked.adapter.graph.update_state(asked.adapter.config(asked.thread_id), {"log": ["lost?"]})

    with pytest.raises(Crash):
        update_that_fails()
    asked.calls.dead = False
    assert asked.read_in_a_delivery() == ["Query", "Query"]


def test_a_note_is_read_only_when_well_formed() -> None:
    assert LatestKeys.from_note(LatestKeys("c-2", {"t#0", "t#-3"}).to_note()) == LatestKeys("c-2", {"t#0", "t#-3"})
    for bad in (None, "", "not json", "[]", '{"checkpoint": 1, "writes": []}', '{"checkpoint": "c", "writes": [3]}'):
        assert LatestKeys.from_note(bad) is None, bad
    assert LatestKeys("").to_note() is None, "a thread without a checkpoint leaves no note"
    many = {f"t#{i}" for i in range(NOTE_WRITES_LIMIT + 1)}
    assert LatestKeys("c", many).to_note() is None, "too many writes for one BatchGetItem: no note"


def test_the_latest_checkpoint_and_its_writes_are_read_in_two_calls(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    saver, calls = saver_calls
    crash, paid = threading.Event(), threading.Event()
    crash.set()
    config = {"configurable": {"thread_id": f"t-{unique}"}}
    adapter = LangGraphAdapter(_fork(saver, calls, crash=crash, paid=paid, slow_starts_late=False))
    with pytest.raises(Crash):
        adapter.start(f"t-{unique}", {"log": []})
    calls.dead = False
    calls.take()
    state = adapter.graph.get_state(config)
    # The checkpoint's head, then its writes' heads, each holding its payload (the library: four calls).
    assert calls.take() == ["Query", "Query"]
    assert [(task.name, task.result) for task in state.tasks if task.result] == [("pay", {"log": ["pay"]})]


def test_a_latest_checkpoint_whose_payload_is_missing_is_passed_over_for_the_one_before(
    saver_calls: tuple[Any, Calls], unique: str, moto_server: str
) -> None:
    """A batch write cut short can leave a head without its payload item (as the library lays them out, and as this
    saver did before it kept payloads in their heads): the reader goes back one, as the library does."""
    saver, _ = saver_calls
    thread_id = f"t-{unique}"
    _, config = _ran_linear(saver, thread_id)
    latest = saver.get_tuple(config)
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
    head = {"PK": {"S": f"CHECKPOINT_{thread_id}"}, "SK": {"S": f"#{latest.config['configurable']['checkpoint_id']}"}}
    client.update_item(  # the head as the library writes it, its payload item never landed
        TableName=saver.table_name,
        Key=head,
        UpdateExpression="SET ref_loc = :table REMOVE payload",
        ExpressionAttributeValues={":table": {"S": "DYNAMODB"}},
    )
    found = saver.get_tuple(config)
    assert found.config["configurable"]["checkpoint_id"] == latest.parent_config["configurable"]["checkpoint_id"]
    assert found.checkpoint["channel_values"]["log"] == ["a", "b"]


# -- the batch write itself -----------------------------------------------------------------------------------


class FlakyClient:
    """`batch_write_item` that hands back the last item unprocessed `throttled` times."""

    def __init__(self, throttled: int) -> None:
        self.throttled = throttled
        self.requests: list[list[str]] = []

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        ((table, requests),) = RequestItems.items()
        self.requests.append([r["PutRequest"]["Item"]["PK"]["S"] for r in requests])
        if self.throttled:
            self.throttled -= 1
            return {"UnprocessedItems": {table: requests[-1:]}}
        return {"UnprocessedItems": {}}


def _items(count: int) -> list[dict[str, Any]]:
    return [{"PK": {"S": f"k{n}"}, "SK": {"S": "CHUNK"}} for n in range(count)]


def test_a_batch_write_sends_25_items_at_a_time_and_again_what_dynamodb_left_unprocessed() -> None:
    client = FlakyClient(throttled=2)
    # k0 twice: the later one wins, so 30 items go
    BatchWriter(client, "t", sleep=lambda _: None).write(_items(30) + _items(1), thread_id="t")
    assert [len(r) for r in client.requests] == [25, 1, 1, 5]
    assert client.requests[1] == client.requests[2] == ["k24"]


def test_a_batch_write_that_dynamodb_keeps_refusing_raises_and_says_how_many_items_are_left() -> None:
    writer = BatchWriter(FlakyClient(throttled=99), "checkpoints", attempts=3, sleep=lambda _: None)
    with pytest.raises(ThreadStateUnavailableError, match="left 1 checkpoint items of thread 't-1' unwritten after 3"):
        writer.write(_items(3), thread_id="t-1")


# -- subgraphs and Send: nested namespaces and pushed tasks -------------------------------------------------------


def _outer_with_a_subgraph_that_asks(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    inner = StateGraph(Line)
    inner.add_node("ask", lambda state: {"log": [f"answer:{interrupt('approve?')}"]})
    inner.add_edge(START, "ask")
    inner.add_edge("ask", END)
    outer = StateGraph(Line)
    outer.add_sequence(
        [
            ("before", lambda state: {"log": ["before"]}),
            ("inner", inner.compile()),
            ("after", lambda state: {"log": ["after"]}),
        ]
    )
    outer.add_edge(START, "before")
    outer.add_edge("after", END)
    return outer.compile(checkpointer=saver)


def test_a_subgraph_that_asks_ends_as_it_does_on_langgraphs_own_saver(
    saver_calls: tuple[Any, Calls], unique: str
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver, _ = saver_calls
    ends = []
    for checkpointer in (saver, InMemorySaver()):
        adapter = LangGraphAdapter(_outer_with_a_subgraph_that_asks(checkpointer))
        thread_id = f"t-{unique}"
        (question,) = adapter.start(thread_id, {"log": []}).questions
        assert [q.question_id for q in adapter.pending(thread_id)] == [question.question_id]
        adapter.resume(thread_id, question.question_id, "yes")
        state = adapter.graph.get_state(adapter.config(thread_id))
        ends.append((state.values, state.next))
    assert ends[0] == ends[1]
    assert "answer:yes" in ends[0][0]["log"]


class Fan(TypedDict):
    items: list[str]
    done: Annotated[list[str], operator.add]


SHIPPED: list[str] = []


def test_sent_branches_that_finished_are_not_run_again_when_another_crashes(
    saver_calls: tuple[Any, Calls], unique: str, moto_server: str
) -> None:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    saver, calls = saver_calls
    crash = threading.Event()
    crash.set()
    SHIPPED.clear()

    table = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)  # not the saver's: not counted

    def others_landed() -> bool:
        items = table.scan(TableName=f"checkpoints-{unique}")["Items"]
        return sum(1 for item in items if item["PK"]["S"].startswith("WRITES_") and item["channel"]["S"] == "done") == 2

    def ship(state: Any) -> dict[str, Any]:
        if state["item"] == "slow":
            # The others finished and their writes landed (waited for, not slept on: under load 0.3 s was not enough)
            deadline = time.monotonic() + 10
            while crash.is_set() and not others_landed() and time.monotonic() < deadline:
                time.sleep(0.05)
            if crash.is_set():
                calls.dead = True
                raise Crash("the process died while one branch ran")
        SHIPPED.append(state["item"])
        return {"done": [state["item"]]}

    builder = StateGraph(Fan)
    builder.add_node("ship", ship)
    builder.add_conditional_edges(START, lambda state: [Send("ship", {"item": i}) for i in state["items"]])
    builder.add_edge("ship", END)
    adapter = LangGraphAdapter(builder.compile(checkpointer=saver))
    thread_id = f"t-{unique}"
    with pytest.raises(Crash):
        adapter.start(thread_id, {"items": ["a", "b", "slow"], "done": []})
    assert sorted(SHIPPED) == ["a", "b"]

    calls.dead = False
    crash.clear()
    adapter.continue_run(thread_id)
    assert sorted(SHIPPED) == ["a", "b", "slow"], "a finished branch ran again"
    assert sorted(adapter.graph.get_state(adapter.config(thread_id)).values["done"]) == ["a", "b", "slow"]
