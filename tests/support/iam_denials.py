"""A pytest fixture that fails any test in which the emulator's IAM check (`agent_wait.local.iam`) refused a function
a call. A conftest imports it to make it autouse for its folder (`tests/local`, `tests/browser`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def iam_denials(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every call the emulator's IAM check refuses during a test, which fails the test unless the test takes them
    out of this list: a handler may swallow an `AccessDenied` (a broken announcer is a log line), so a passing flow
    alone does not prove the roles grant what it did."""
    from agent_wait.local.iam import LocalIam

    refused: list[Any] = []
    deny = LocalIam._deny

    def recorded(self: LocalIam, *args: Any, **kwargs: Any) -> Any:
        denial = deny(self, *args, **kwargs)
        refused.append(denial)
        return denial

    monkeypatch.setattr(LocalIam, "_deny", recorded)
    yield refused
    assert not refused, "the emulator refused a function these calls:\n" + "\n".join(d.message for d in refused)
