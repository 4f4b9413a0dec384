"""`agent-wait dev`: the local stack in the foreground, printing envelopes, stopping cleanly."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import pytest

from agent_wait.cli import main
from agent_wait.cli._target import LOCAL_STATE


def test_dev_prints_each_envelope_and_cleans_up(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agent-wait dev` (run_dev) serves the stack, prints envelopes without their question, and stops cleanly."""
    import io

    import agent_wait.cli._dev as dev

    monkeypatch.chdir(tmp_path)
    out, stop = io.StringIO(), threading.Event()
    status: list[int] = []
    server = threading.Thread(target=lambda: status.append(dev.run_dev(lambda: refund_template, out=out, stop=stop)))
    server.start()
    try:
        deadline = time.monotonic() + 120
        while not LOCAL_STATE.exists() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        state = json.loads(LOCAL_STATE.read_text())
        thread = f"order-dev-{uuid.uuid4().hex[:6]}"
        assert (
            main(
                [
                    "start",
                    thread,
                    "--input",
                    json.dumps({"order_id": thread, "amount": 987654, "customer": "zoe@example.com"}),
                ]
            )
            == 0
        )
        while "wait.created" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        stop.set()
        server.join(timeout=60)
    printed = out.getvalue()
    assert f"thread={thread}" in printed
    assert "tags=approver_group=finance" in printed
    # Canary values no id or timestamp can contain by chance (a question id may hold "900").
    after = printed.split("wait.created", 1)[1]
    assert "987654" not in after, "the question's content must not be printed"
    assert "zoe@example.com" not in after, "the question's content must not be printed"
    assert status == [0], "dev must stop cleanly"
    assert not LOCAL_STATE.exists(), "dev must remove its state file"
    assert state["queue_url"].endswith(".fifo")
