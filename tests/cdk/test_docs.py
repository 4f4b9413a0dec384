"""docs/constructs.md stays true to the code: its embedding snippet synthesizes, its tables name every prop."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from aws_cdk.assertions import Template
from tests.cdk.conftest import REPO, new_app

from agent_wait_cdk import AgentWait

DOC = (REPO / "docs" / "constructs.md").read_text()


def _snippet() -> str:
    section = DOC.split("## Embed it in your own app", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the embedding section has no python snippet"
    return match.group(1)


def test_the_embedding_snippet_synthesizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "src" / "refunds_service"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)  # graph_source paths resolve from where `cdk` runs
    namespace: dict[str, object] = {}
    exec(compile(_snippet(), "docs/constructs.md", "exec"), namespace)
    app = new_app()
    stack = namespace["RefundsServiceStack"](app, "RefundsService")  # type: ignore[operator]
    template = Template.from_stack(stack)  # type: ignore[arg-type]
    template.resource_count_is("AWS::DynamoDB::Table", 2)  # theirs + the checkpoint table
    template.resource_count_is("AWS::SNS::Topic", 1)
    template.resource_count_is("AWS::Events::EventBus", 0)


def test_every_agent_wait_prop_is_in_the_props_table() -> None:
    table = DOC.split("## `AgentWait` props", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE))
    params = set(inspect.signature(AgentWait.__init__).parameters) - {"self", "scope", "id"}
    assert documented == params


def test_every_environment_variable_is_documented() -> None:
    from agent_wait import schema

    for setting in schema.Settings:
        assert f"`{setting.value}`" in DOC, setting.value
