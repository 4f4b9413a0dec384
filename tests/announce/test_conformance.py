"""The announcer conformance suite, run against InMemoryAnnounce and WebhookAnnounce."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator

import pytest

from agent_wait import InMemoryAnnounce, Transition, WebhookAnnounce
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import AnnounceHarness

from .conftest import Receiver, start_receiver

RULES = (*announce_contract.REQUIRED, *announce_contract.OPTIONAL)


def memory_harness(delivers: Iterable[Transition | str] | None = None) -> AnnounceHarness:
    memory = InMemoryAnnounce(delivers=delivers)
    return AnnounceHarness(memory, read_back=lambda: [envelope.to_dict() for _, envelope in memory.events])


@pytest.fixture
def webhook_factory() -> Iterator[Callable[..., AnnounceHarness]]:
    """Each harness gets its own receiver; read_back parses what arrived, break_backend stops it."""
    started: list[Receiver] = []

    def make(delivers: Iterable[Transition | str] | None = None) -> AnnounceHarness:
        receiver = start_receiver()
        started.append(receiver)
        return AnnounceHarness(
            WebhookAnnounce(receiver.url, secret="whsec_conformance", timeout=2.0, delivers=delivers),
            read_back=lambda: [json.loads(body) for body in receiver.bodies()],
            break_backend=receiver.stop,
        )

    yield make
    for receiver in started:
        receiver.stop()


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_in_memory_announce_conforms(rule: Callable[[announce_contract.AnnouncerFactory], None]):
    rule(memory_harness)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_webhook_announce_conforms(
    rule: Callable[[announce_contract.AnnouncerFactory], None], webhook_factory: Callable[..., AnnounceHarness]
):
    rule(webhook_factory)
