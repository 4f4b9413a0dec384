"""Holding a thread while one message is applied: the ledger's per-thread lease, waited for briefly."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from agent_wait.asking.delivery import Delivery, delivering
from agent_wait.errors import ThreadBusyError
from agent_wait.ledger import LeaseLedger, NoteLedger, ThreadLease

__all__ = ("error_name", "hold_thread")


@contextmanager
def hold_thread(
    ledger: LeaseLedger,
    thread_id: str,
    *,
    clock: Callable[[], datetime],
    seconds: float,
    wait: float,
    on_busy: Callable[[], None],
    log: logging.Logger | Any,
    runs_agent: bool = True,
) -> Iterator[ThreadLease]:
    """Hold `thread_id`'s lease for the block; wait up to `wait` seconds for another holder to let go.

    `runs_agent=False` holds it for something that never runs the agent (a door deciding an answer): such a holder
    never takes over the lease of a run that died part-way (`LeaseLedger.acquire_lease`), so it waits for that run's
    redelivery as for a live one.

    Raises:
        ThreadBusyError: another delivery still held the thread after `wait` (the message is retried).
    """
    holder = uuid.uuid4().hex
    give_up = time.monotonic() + wait
    delay = 0.05
    # Passed only when it says something: a ledger from before it is asked what it knows.
    kind: dict[str, bool] = {} if runs_agent else {"runs_agent": False}
    lease = ledger.acquire_lease(thread_id, holder, now=clock(), seconds=seconds, **kind)
    if lease is None:
        on_busy()
    while lease is None:
        if time.monotonic() >= give_up:
            raise ThreadBusyError(
                f"thread {thread_id} is held by another delivery; SQS will deliver this message again",
                thread_id=thread_id,
            )
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
        lease = ledger.acquire_lease(thread_id, holder, now=clock(), seconds=seconds, **kind)
    held = Delivery(lease)
    try:
        with delivering(held):
            yield lease
    finally:
        try:
            # Never the note this lease took: this delivery may have changed what it names without knowing.
            # A ledger that keeps no notes (not a NoteLedger) is passed none.
            note = held.leave_note() if held.leave_note is not None and isinstance(ledger, NoteLedger) else None
            # Only when there is one: a ledger from before `finished_start` is passed what it knows.
            finished = {"finished_start": held.finished_start} if held.finished_start is not None else {}
            ledger.release_lease(
                thread_id,
                holder,
                open_questions=held.open_questions,
                note=note,
                handed_over=held.handed_over,
                **finished,
            )
        except Exception as exc:  # the lease then runs out by itself; the outcome stands
            log.warning(
                "could not release the thread's lease; it expires by itself",
                extra={"thread_id": thread_id, "error": error_name(exc)},
            )


def error_name(exc: BaseException) -> str:
    """The exception's type, and the store's error code when it has one: never its text."""
    code = getattr(exc, "code", None)
    response = getattr(exc, "response", None)
    if code is None and isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
    return f"{type(exc).__name__} ({code})" if code else type(exc).__name__
