"""docs/any-language.md: its Python client and its TypeScript client (run with node) ask a person through the refund
stack's MCP server, a finance person approves in the inbox, and each prints what the page says."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.local._http import call
from tests.support.refund_world import RefundWorld, refund_stack

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "any-language.md"
PAGE = DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[RefundWorld]:
    with refund_stack(refund_template, "mcp-doc") as world:
        yield world


def approve(world: RefundWorld, task_id: str) -> None:
    answered = call(
        f"{world.local.api_url}/questions/{task_id}/answer",
        method="POST",
        token=world.local.issuer.token("finn@example.com", ["finance"]),
        body={"answer": {"action": "approve"}},
    )
    assert answered.status == 200, answered.body


def test_the_python_client_asks_and_gets_the_approval(world: RefundWorld) -> None:
    (snippet,) = re.findall(r"```python\n(.*?)```", PAGE, re.DOTALL)
    namespace: dict[str, Any] = {"__name__": "any_language_doc"}
    exec(compile(snippet, str(DOC), "exec"), namespace)  # the page's own code
    url, token, key = world.local.api_url, world.local.issuer.token("ana@example.com"), uuid.uuid4().hex
    task_id = namespace["ask_person"](url, token, "Refund 900 to order 7?", key)
    assert namespace["ask_person"](url, token, "Refund 900 to order 7?", key) == task_id, "the same key, the same task"
    approve(world, task_id)
    assert namespace["wait_for_answer"](url, token, task_id) == ("completed", {"action": "approve"})
    assert "returns `('completed', {'action': 'approve'})`" in PAGE


def test_the_typescript_client_asks_and_gets_the_approval(world: RefundWorld, tmp_path: Path) -> None:
    if shutil.which("node") is None or not (ROOT / "node_modules" / "@modelcontextprotocol" / "client").exists():
        pytest.skip("needs node and the TypeScript SDK: run `npm ci` at the repository root")
    (snippet,) = re.findall(r"```typescript\n(.*?)```", PAGE, re.DOTALL)
    script = tmp_path / "ask.mjs"
    script.write_text(snippet, encoding="utf-8")
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")  # node resolves the SDK beside the script
    environment = {
        "PATH": str(Path(shutil.which("node") or "node").parent),
        "AGENT_WAIT_API": world.local.api_url,
        "AGENT_WAIT_TOKEN": world.local.issuer.token("ana@example.com"),
        "KEY": uuid.uuid4().hex,
    }
    with subprocess.Popen(
        ["node", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    ) as running:
        assert running.stdout is not None
        first = running.stdout.readline().strip()
        assert first.startswith("asked: mcp-"), (first, running.stderr.read() if running.stderr else "")
        approve(world, first.removeprefix("asked: "))
        out, err = running.communicate(timeout=120)
    assert running.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == {"status": "completed", "answer": {"action": "approve"}}
    assert '`{"status":"completed","answer":{"action":"approve"}}`' in PAGE
