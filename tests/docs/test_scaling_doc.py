"""docs/scaling.md: its python snippet runs, and its step tables are what that snippet computes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.docs.test_readme import run_snippets

DOC = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


@pytest.fixture(scope="module")
def namespace() -> dict[str, Any]:
    found: dict[str, Any] = {"__name__": "scaling"}
    assert run_snippets(DOC, found) >= 1
    return found


def test_the_sharded_due_key_holds_2000_lifecycles_a_second_at_the_default_shards(namespace: dict[str, Any]) -> None:
    assert namespace["CEILING"] == 2_000
    assert namespace["SHARDS"] == 8  # AGENT_WAIT_INDEX_SHARDS' default
    text = " ".join(DOC.read_text(encoding="utf-8").split())  # the page wraps its lines anywhere
    assert "**2,000 a second with the default 8 shards**" in text


def test_the_shards_the_page_asks_for_keep_each_due_key_value_under_a_partition(namespace: dict[str, Any]) -> None:
    text = DOC.read_text(encoding="utf-8")
    shards = namespace["shards_needed"](10_000)
    assert f"`AGENT_WAIT_INDEX_SHARDS={shards}`" in text
    assert namespace["capacity"](10_000, shards=shards)["due_shard_writes_per_s"] <= 1_000


@pytest.mark.parametrize("rate", [10, 100, 1_000, 10_000])
def test_each_step_table_shows_the_computed_figures(namespace: dict[str, Any], rate: int) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### {rate:,} lifecycles a second", 1)[1].split("###", 1)[0]
    row = namespace["capacity"](rate)
    assert f"{row['sqs_sends_per_s']:,} sends/s" in section
    assert f"{row['question_table_wru_per_s']:,} / {row['checkpoint_table_wru_per_s']:,} WRU/s" in section
    assert f"{row['due_shard_writes_per_s']:,} writes/s on each `due` shard" in section
    assert f"{row['sns_publishes_per_s']:,}/s each" in section


@pytest.mark.parametrize("rate", [10, 100, 1_000, 10_000])
def test_each_step_costs_what_the_snippet_computes_to_two_figures(namespace: dict[str, Any], rate: int) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### {rate:,} lifecycles a second", 1)[1].split("###", 1)[0]
    usd = float(f"{namespace['capacity'](rate)['usd_per_month']:.2g}")
    shown = f"${usd / 1e6:.1f} million" if usd >= 1e6 else f"${usd:,.0f}"
    assert f"| cost | about {shown} a month |" in section
