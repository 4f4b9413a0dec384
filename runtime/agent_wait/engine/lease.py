"""Holding a thread while one message is applied: the ledger's per-thread lease, waited for briefly."""

from __future__ import annotations

import functools
import inspect
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_wait.errors import ThreadBusyError
from agent_wait.ledger import Ledger, ThreadLease

__all__ = ("HeldThread", "error_name", "held_thread", "hold_thread")


@dataclass(slots=True)
class HeldThread:
    """The lease this delivery holds, and what its release records."""

    lease: ThreadLease
    open_questions: tuple[str, ...] | None = None
    """The thread's open question ids once the agent ran (`AskedQuestions.after_run` sets them), recorded by the
    release; None when the agent did not run, which leaves the recorded ids as they are."""
    new_thread: bool = False
    """Set when the thread has no state and its lease recorded nothing: it has asked nothing yet, so its open
    questions need no query of the ledger."""
    decided: set[str] = field(default_factory=set)
    """Question ids this delivery saw decided: a decided question never opens again, so none is read again."""
    leave_note: Callable[[], str | None] | None = None
    """Called at the release: what it returns is left for the next delivery (`ThreadLease.note`). The checkpoint
    saver sets it when it reads the thread; a delivery that never did leaves no note."""
    memo: dict[str, Any] = field(default_factory=dict)
    """What may be remembered while the lease is held, and no longer: no other delivery can change the thread
    meanwhile (the checkpoint saver keeps its latest read here)."""


_HELD: ContextVar[HeldThread | None] = ContextVar("agent_wait_held_thread", default=None)


def held_thread(thread_id: str) -> HeldThread | None:
    """The lease this delivery holds on `thread_id` (inside `hold_thread`), or None."""
    held = _HELD.get()
    return held if held is not None and held.lease.thread_id == thread_id else None


@contextmanager
def hold_thread(
    ledger: Ledger,
    thread_id: str,
    *,
    clock: Callable[[], datetime],
    seconds: float,
    wait: float,
    on_busy: Callable[[], None],
    log: logging.Logger | Any,
) -> Iterator[ThreadLease]:
    """Hold `thread_id`'s lease for the block; wait up to `wait` seconds for another holder to let go.

    Raises:
        ThreadBusyError: another delivery still held the thread after `wait` (the message is retried).
    """
    holder = uuid.uuid4().hex
    give_up = time.monotonic() + wait
    delay = 0.05
    lease = ledger.acquire_lease(thread_id, holder, now=clock(), seconds=seconds)
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
        lease = ledger.acquire_lease(thread_id, holder, now=clock(), seconds=seconds)
    held = HeldThread(lease)
    token = _HELD.set(held)
    try:
        yield lease
    finally:
        _HELD.reset(token)
        try:
            # Never the note this lease took: this delivery may have changed what it names without knowing.
            note = None if held.leave_note is None else held.leave_note()
            if note is None or not _takes_note(type(ledger)):
                ledger.release_lease(thread_id, holder, open_questions=held.open_questions)
            else:
                ledger.release_lease(thread_id, holder, open_questions=held.open_questions, note=note)
        except Exception as exc:  # the lease then runs out by itself; the outcome stands
            log.warning(
                "could not release the thread's lease; it expires by itself",
                extra={"thread_id": thread_id, "error": error_name(exc)},
            )


@functools.cache
def _takes_note(ledger_type: type) -> bool:
    """Whether the ledger's `release_lease` takes a `note` (a ledger written before notes does not)."""
    return "note" in inspect.signature(ledger_type.release_lease).parameters


def error_name(exc: BaseException) -> str:
    """The exception's type, and the store's error code when it has one: never its text."""
    code = getattr(exc, "code", None)
    response = getattr(exc, "response", None)
    if code is None and isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
    return f"{type(exc).__name__} ({code})" if code else type(exc).__name__
