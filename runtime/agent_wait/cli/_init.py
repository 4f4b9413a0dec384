"""`agent-wait init`: a small, working project in a folder, from a graph that asks to a stack you can deploy.

It writes a graph whose one step waits for an approval, a CDK app that wraps it in `AgentWait`, `cdk.json`,
a `package.json` that pins the CDK CLI, the pinned requirements of the Lambda bundle, the project's own
requirements, one test that drives a start and an answer on the local emulator, and a README that says the
next three commands. It never overwrites:
when any of its files exists, it writes nothing and names them.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import keyword
import re
from pathlib import Path

from agent_wait.cli._target import CliError

__all__ = ("CDK_CLI_VERSION", "init_project")

_NAME = re.compile(r"[a-z_][a-z0-9_]*")

CDK_CLI_VERSION = "2.1148.1"
"""The AWS CDK CLI a new project pins in its `package.json`: the one agent-wait's own `package-lock.json` pins, which
its constructs are tested with (`tests/local/test_init.py` fails when the two differ)."""

_GRAPH = '''"""{name}'s agent: one step that waits for a person's approval before it acts."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait

APPROVAL = WaitPolicy(
    timeout="P1D",
    # What the deadline applies when nobody answered in time. A person's cancel never delivers it: with no
    # on_cancel= here, a cancel delivers {{"action": "cancelled", "reason": ..., "by": ...}} instead.
    default={{"action": "reject", "reason": "nobody answered within a day"}},
    allowed_actions=("approve", "reject"),
    tags={{"approver_group": "ops"}},
)


class State(TypedDict, total=False):
    service: str
    result: str


@wait(APPROVAL)
def restart(service: str) -> str:
    """The action a person approves. Make side effects idempotent: a crash can run a step again."""
    return f"restarted {{service}}"


def act(state: State) -> dict[str, Any]:
    result = restart(state["service"])
    if isinstance(result, str):  # approved: the call ran and returned
        return {{"result": result}}
    # Otherwise the answer comes back in the call's place: a person's reject ({{"action": "reject", "note"?}}), the
    # default when the deadline passed, or a person's cancel ({{"action": "cancelled", "reason", "by"}}).
    who = f" by {{result['by']}}" if result.get("by") else ""
    why = result.get("reason") or result.get("note") or "no reason given"
    return {{"result": f"not restarted: {{result.get('action')}}{{who}} ({{why}})"}}


def build_graph(checkpointer: Any) -> Any:
    """The compiled graph; the router gives it a checkpointer (DynamoDB on AWS, the emulator locally)."""
    builder = StateGraph(State)
    builder.add_node("act", act)
    builder.add_edge(START, "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=checkpointer)
'''

_APP = '''"""The CDK app: `cdk deploy` puts {name}'s agent behind agent-wait on AWS.

`cdk synth -c agent-wait:bundle=false` synthesizes without building the Lambda bundle (do not deploy that).
"""

from __future__ import annotations

import os

# Before the CDK loads: jsii would print its Node end-of-life banner, line by line, as Python bytes. The CDK
# still runs on Node 20; upgrade Node to 22 or later and this line changes nothing.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App, CfnOutput, Stack  # noqa: E402  (after the line above, on purpose)
from aws_cdk import aws_sns as sns  # noqa: E402

from agent_wait_cdk import AgentWait  # noqa: E402

app = App()
stack = Stack(app, "{stack}")
# Every alarm (dead letters, router and sweep errors, the oldest open question) notifies this topic when it fires
# and when it is OK again. Subscribe whoever is on call, e.g.:
#   aws sns subscribe --topic-arn <AlarmTopicArn> --protocol email --notification-endpoint you@example.com
alarm_topic = sns.Topic(stack, "AlarmTopic", enforce_ssl=True)
AgentWait(
    stack,
    "AgentWait",
    graph="{name}.graph:build_graph",
    graph_source=["{name}"],
    requirements_file="requirements-lambda.txt",
    alarm_topic=alarm_topic,
    # Questions are announced on one SNS topic. For EventBridge rules instead, pass bus=True (the bus alone);
    # for both, topic=True and bus=True: each announcer is paid per envelope (docs/cost.md, "Choosing announcers").
)
CfnOutput(stack, "AlarmTopicArn", value=alarm_topic.topic_arn)
app.synth()
'''

_CDK_JSON = """{{
  "app": "python app.py",
  "context": {{
    "cli-telemetry": false
  }}
}}
"""

_PACKAGE_JSON = """{{
  "name": "{package}",
  "private": true,
  "description": "Pins the AWS CDK CLI: after npm install, npx cdk runs this version.",
  "scripts": {{
    "cdk": "cdk"
  }},
  "devDependencies": {{
    "aws-cdk": "{version}"
  }}
}}
"""

_TEST = '''"""A start and an answer through the real router, on the local emulator (no AWS account needed)."""

from __future__ import annotations

import uuid

from agent_wait.local.stack import EmulatedStack
from agent_wait_cdk.local_template import template_for_graph


def test_a_person_approves_and_the_agent_acts() -> None:
    with EmulatedStack(template_for_graph("{name}.graph:build_graph")) as local:
        thread = f"svc-{{uuid.uuid4().hex[:8]}}"
        local.send({{"thread_id": thread, "input": {{"service": "billing"}}}}, deduplication_id=uuid.uuid4().hex)
        [question] = [q for outcome in local.pump().outcomes for q in outcome.asked]

        local.send(
            {{"thread_id": thread, "question_id": question, "answer": {{"action": "approve"}}}},
            deduplication_id=uuid.uuid4().hex,
        )
        [outcome] = local.pump().outcomes

        assert outcome.kind.value == "applied"
'''

_README = """# {name}

An agent that waits for a person's approval, on agent-wait.

```bash
pip install -r requirements.txt                                  # agent-wait with the emulator and CDK
agent-wait dev --graph {name}.graph:build_graph                  # run it locally; answer at the printed inbox
python -m pytest                                                 # a start and an answer, on the emulator
```

Deploy with `npm install` (the CDK CLI that `package.json` pins), then `npx cdk deploy` (an AWS account and a
bootstrapped region). `requirements-lambda.txt` is what the Lambda bundle installs: add your graph's own
dependencies there, pinned. The stack's alarms notify its `AlarmTopicArn` output: subscribe whoever is on call
(`aws sns subscribe --topic-arn ARN --protocol email --notification-endpoint you@example.com`).
"""


def init_project(folder: Path, name: str) -> list[Path]:
    """Write the project into `folder`; returns the files written.

    Raises:
        CliError: `name` is not a Python package name, or a file it would write exists already.
    """
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise CliError(
            f"--name must be a Python package name (lowercase letters, digits, _), e.g. my_agent; got {name!r}"
        )
    version = importlib.metadata.version("agent-wait")
    stack = "".join(part.capitalize() for part in name.split("_") if part) + "Stack"
    files = {
        Path(name) / "__init__.py": "",
        Path(name) / "graph.py": _GRAPH.format(name=name),
        Path("app.py"): _APP.format(name=name, stack=stack),
        Path("cdk.json"): _CDK_JSON.format(),
        Path("requirements-lambda.txt"): _lambda_requirements(),
        Path("requirements.txt"): f"agent-wait[local]=={version}\npytest>=8\n",
        Path("tests") / f"test_{name}.py": _TEST.format(name=name),
        Path("README.md"): _README.format(name=name),
        Path("package.json"): _PACKAGE_JSON.format(package=name.replace("_", "-"), version=CDK_CLI_VERSION),
    }
    existing = sorted(str(path) for path in files if (folder / path).exists())
    if existing:
        raise CliError(
            f"{folder} already has {', '.join(existing)}; init writes nothing over them: use an empty folder"
        )
    written = []
    for path, text in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def _lambda_requirements() -> str:
    """The runtime's Lambda pins as the constructs ship them (found, not imported: the runtime imports no CDK)."""
    spec = importlib.util.find_spec("agent_wait_cdk")
    if spec is None or not spec.submodule_search_locations:
        raise CliError("agent-wait init needs the constructs: pip install 'agent-wait[cdk]'")
    return (Path(next(iter(spec.submodule_search_locations))) / "requirements-lambda.txt").read_text(encoding="utf-8")
