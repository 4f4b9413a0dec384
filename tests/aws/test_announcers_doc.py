"""docs/announcers.md stays true: every python snippet runs, in order, against the emulator."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "announcers.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_every_snippet_in_the_announcers_doc_runs(
    moto_server: str,
    monkeypatch: pytest.MonkeyPatch,
    aws_client: Callable[[str], Any],
    make_queue: Callable[..., Any],
    make_question_table: Callable[[], Any],
    unique: str,
) -> None:
    # GIVEN the resources the page names, and boto3 pointed at the emulator by environment
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    sns, events = aws_client("sns"), aws_client("events")
    bus_name = f"approvals-{unique}"
    events.create_event_bus(Name=bus_name)
    namespace: dict[str, Any] = {
        "__name__": "announcers_doc",
        "topic_arn": sns.create_topic(Name=f"questions-{unique}")["TopicArn"],
        "fifo_topic_arn": sns.create_topic(Name=f"questions-{unique}.fifo", Attributes={"FifoTopic": "true"})[
            "TopicArn"
        ],
        "queue_url": make_queue("doc").url,
        "fifo_queue_url": make_queue("doc", fifo=True).url,
        "bus_name": bus_name,
        "table_name": make_question_table().name,
    }
    snippets = SNIPPET.findall(DOC.read_text(encoding="utf-8"))
    assert len(snippets) >= 6, "expected the page's python snippets"

    # WHEN each snippet runs in one shared namespace, as a reader would run them in order
    # THEN none raises (each carries its own asserts)
    for number, code in enumerate(snippets, start=1):
        try:
            exec(compile(code, f"{DOC.name}: snippet {number}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"snippet {number} of {DOC.name} failed: {exc!r}\n{code}") from exc
