"""A test MCP server that asks before it books: the `mcp` SDK's `MCPServer` over streamable HTTP (stateless, protocol
2026-07-28), in a thread on 127.0.0.1 with uvicorn.

Its tool `book_table(day)` answers a first call with an `InputRequiredResult` eliciting a form (who books, how many
seats) or, with `mode="url"`, a link to pay a deposit at; the retried call, carrying `inputResponses` and the echoed
`requestState`, books with the answer. Every retried call is recorded (`received`), so a test can say the server got
the content exactly once.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)

CONTACT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "seats": {"type": "integer", "minimum": 1, "title": "Seats"},
    },
    "required": ["name", "seats"],
}
"""The form `book_table` asks for (flat, as MCP's `requestedSchema` must be)."""

PAY_URL = "https://pay.example.com/deposit/d-7f3a"
"""Where a URL-mode booking sends the person to pay; no secret in it."""


@dataclass
class ElicitServer:
    """The running server: its URL and what it received."""

    url: str
    received: list[dict[str, Any]] = field(default_factory=list)
    """Each retried call: `{"day", "state", "responses": {key: {"action", "content"}}}`, in order."""
    asked: list[str] = field(default_factory=list)
    """The day of each call that was answered with an `InputRequiredResult`."""


def _server(record: ElicitServer) -> Any:
    server = MCPServer("bookings")

    @server.tool()
    def book_table(day: str, ctx: Context, mode: str = "form") -> InputRequiredResult | str:
        """Book a table for `day`, after asking who books (a form) or for a deposit (a link)."""
        responses = ctx.input_responses
        if not responses:
            record.asked.append(day)
            if mode == "url":
                params: Any = ElicitRequestURLParams(message="Pay the deposit", url=PAY_URL, elicitation_id="d-7f3a")
                key = "deposit"
            else:
                params = ElicitRequestFormParams(message="Who is booking?", requested_schema=CONTACT)
                key = "contact"
            return InputRequiredResult(input_requests={key: ElicitRequest(params=params)}, request_state=f"day={day}")
        got = {
            key: {"action": response.action, "content": response.content}
            for key, response in responses.items()
            if isinstance(response, ElicitResult)
        }
        record.received.append({"day": day, "state": ctx.request_state, "responses": got})
        (answer,) = got.values()
        if answer["action"] != "accept":
            return f"not booked: {answer['action']}"
        content = answer["content"] or {}
        return f"booked {day} for {content.get('name', 'the payer')}"

    return server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def elicit_server() -> Iterator[ElicitServer]:
    """Run the server until the block ends; yields it once it accepts connections."""
    import uvicorn

    port = _free_port()
    record = ElicitServer(url=f"http://127.0.0.1:{port}/mcp")
    app = _server(record).streamable_http_app(stateless_http=True, json_response=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not running.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test MCP server did not start within 60 s")
        time.sleep(0.05)
    try:
        yield record
    finally:
        running.should_exit = True
        thread.join(timeout=30)
