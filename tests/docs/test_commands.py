"""Every shell command in README.md and docs/ is run by a test.

`RUN_BY` names, for each command a page shows (matched by its start, after an optional `uv run `), the test
that runs it and a piece of that test's file that shows it does. A new command in a page without a test
fails here. The commands that need an AWS account (bootstrap, deploy, destroy) are run by no test on these
machines; `NEEDS_AN_AWS_ACCOUNT` lists them, and nothing else may hide there. Commands that only need this
checkout and run fast are run right here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"```(?:bash|sh|shell)\n(.*?)```", re.DOTALL)

RUN_BY: dict[str, tuple[str, str]] = {
    # README: quick start, run as written from the built wheel
    "pip install 'agent-wait[local]'": ("tests/packaging/test_journey.py", "for command in FIRST[:-1]:"),
    "agent-wait demo": ("tests/packaging/test_journey.py", "12 of 12 scenarios behaved as they should."),
    "agent-wait init": ("tests/packaging/test_journey.py", 'split("## Quick start", 1)'),
    "cd my-agent": ("tests/packaging/test_journey.py", 'command.startswith("cd ")'),
    "pip install -r requirements.txt": ("tests/packaging/test_journey.py", '"pip install -r requirements.txt" in'),
    "python -m pytest": ("tests/packaging/test_journey.py", '"1 passed"'),
    "agent-wait dev --graph": ("tests/packaging/test_journey.py", "agent-wait dev --graph "),
    "agent-wait start svc-1": ("tests/packaging/test_journey.py", "start, listing, answer, resumed = SECOND"),
    "agent-wait questions --status resumed": ("tests/packaging/test_journey.py", "resumed"),
    "agent-wait questions --status cancelled": (
        "tests/local/test_operators_local.py",
        '["questions", "--status", "cancelled"]',
    ),
    "agent-wait questions": ("tests/local/test_cli.py", '["questions", "--status", "open", "--json"]'),
    "agent-wait answer QUESTION_ID approve --outputs": ("tests/local/test_cli.py", "test_outputs_file_of_a_deployed"),
    "agent-wait answer QUESTION_ID approve --note": ("tests/local/test_cli.py", '"approve", "--note", "within budget"'),
    "agent-wait answer QUESTION_ID approve": ("tests/local/test_local_api.py", '"approve", "--token", token'),
    "agent-wait answer Q-ID approve --note": ("tests/local/test_local_api.py", '"--note", "within budget"'),
    "agent-wait answer Q1 Q2 Q3 approve": ("tests/local/test_operators_local.py", '"answer", q2, q3, q1, "approve"'),
    "agent-wait cancel QUESTION_ID --reason": ("tests/local/test_operators_local.py", '"cancel", q1, "--reason"'),
    # the contributors' two commands and the repository's own tools
    "scripts/dev test": ("tests/docs/test_readme.py", "test_ci_runs_the_readme_test_command"),
    "scripts/dev demo": ("tests/docs/test_commands.py", "test_scripts_dev_demo_runs_the_demo_command"),
    "scripts/dev setup": ("tests/docs/test_readme.py", 'command.split()[1]})" in script'),
    "--frozen pytest tests/cdk": ("tests/docs/test_readme.py", "test_ci_runs_the_readme_test_command"),
    "npx cdk synth": ("tests/docs/test_commands.py", "test_npx_cdk_synth_runs_offline"),
    "uv export --frozen --no-dev --extra langgraph-host --extra mcp --extra a2a --extra push --extra passkey": (
        "tests/cdk/test_schema_match.py",
        '"uv", "export"',
    ),
    "uv export --frozen --no-dev --extra host --extra pydantic-ai": (
        "tests/docs/test_commands.py",
        "test_the_pydantic_ai_router_requirements_export",
    ),
    "AGENT_WAIT_SCREENSHOTS=docs/images uv run pytest tests/browser -k screenshots": (
        "tests/browser/test_inbox.py",
        'os.environ.get("AGENT_WAIT_SCREENSHOTS")',
    ),
    "AGENT_WAIT_SCREENSHOTS=docs/images uv run pytest tests/browser/test_dashboard_render.py": (
        "tests/browser/test_dashboard_render.py",
        'os.environ.get("AGENT_WAIT_SCREENSHOTS")',
    ),
    # running it locally
    "agent-wait dev": ("tests/local/test_local_api.py", "test_dev_serves_the_api_and_prints_a_curl_line_that_works"),
    "agent-wait init my-project": ("tests/local/test_init.py", 'main(["init", str(folder)])'),
    "agent-wait link": ("tests/local/test_dev_graph.py", 'main(["link", question, "restart"])'),
    "agent-wait start order-7": ("tests/local/test_cli.py", 'main(["start", thread, "--input"'),
    "agent-wait start order-1": ("tests/local/test_cli.py", "test_outputs_file_of_a_deployed_stack_is_read"),
    "agent-wait questions --status open --stack": ("tests/local/test_cli.py", "test_stack_finds_a_deployed_stack"),
    "agent-wait questions --status open": ("tests/local/test_cli.py", '["questions", "--status", "open", "--json"]'),
    "agent-wait questions --status failed": ("tests/engine/test_failed_threads.py", "QuestionStatus.FAILED"),
    "agent-wait questions show": ("tests/local/test_cli.py", '["questions", "show", question]'),
    "export AGENT_WAIT_TOKEN=$(": ("tests/local/test_local_api.py", 'main(["token", "--user", "carol@example.com"'),
    "agent-wait failures": ("tests/engine/test_failed_threads.py", 'main(["failures"])'),
    "agent-wait retry": ("tests/engine/test_failed_threads.py", 'main(["retry", thread_id, "--retry-id", "fix-1"])'),
    "agent-wait audit export --since 2026-03-01 --until": (
        "tests/aws/test_audit_export.py",
        '"--format", "csv", "--out", "trail.csv"',
    ),
    "agent-wait audit export --since 2026-03-01T09:00:00Z": (
        "tests/aws/test_audit_export.py",
        '"--out", "trail.jsonl", *on_the_table',
    ),
    "agent-wait audit grants --since": (
        "tests/aws/test_audit_grants_export.py",
        '["audit", "grants", "--since", since, "--out", "grants.jsonl", *on_the_table]',
    ),
    "agent-wait dead-letters list": ("tests/local/test_cli.py", '["dead-letters", "list", "--json"]'),
    'curl -s -H "Authorization: Bearer $AGENT_WAIT_TOKEN"': (
        "tests/local/test_local_api.py",
        "curl -s -H 'Authorization: Bearer",
    ),
    # docs/cli.md: each command's options, as the tests of the CLI run them
    'agent-wait start order-7 --input \'{"order_id": "order-7", "amount": 900}\' --start-id': (
        "tests/local/test_cli.py",
        '"--start-id", "ticket-4471"',
    ),
    "agent-wait questions --status open --output json": (
        "tests/local/test_cli.py",
        '"--status", "open", "--output", "json"',
    ),
    "agent-wait questions show QUESTION_ID --json": (
        "tests/local/test_cli.py",
        '["questions", "show", question, "--json"]',
    ),
    "agent-wait answer QUESTION_ID approve --args": (
        "tests/local/test_cli.py",
        '"approve", "--args", \'{"amount": 500}\'',
    ),
    "agent-wait answer QUESTION_ID --answer": (
        "tests/local/test_cli.py",
        '"--answer", \'{"action": "reject", "reason": "duplicate order"}\'',
    ),
    "agent-wait answer QUESTION_ID approve --by": (
        "tests/local/test_local_api.py",
        '"approve", "--by", "cfo@example.com"',
    ),
    "agent-wait extend QUESTION_ID --by PT2H": (
        "tests/local/test_cli_extend.py",
        '["extend", question_id, "--by", "PT2H", "--token", token',
    ),
    "agent-wait push keys --secret": ("tests/host/test_push_keys_cli.py", '["push", "keys", "--secret", name'),
    "agent-wait grants list --all": ("tests/local/test_local_grants.py", '["grants", "list", "--all"]'),
    "agent-wait grants show": ("tests/local/test_local_grants.py", '["grants", "show", grant_id, "--json"]'),
    "agent-wait grants revoke": ("tests/local/test_local_grants.py", '["grants", "revoke", grant_id]'),
    "agent-wait dead-letters redrive --reason retries_exhausted": (
        "tests/local/test_cli.py",
        '["dead-letters", "redrive", "--reason", "retries_exhausted", "--thread", thread]',
    ),
}
NEEDS_AN_AWS_ACCOUNT = ("npx cdk bootstrap", "npx cdk deploy", "npx cdk destroy")


def _commands() -> list[tuple[str, str]]:
    """(page, command) for every command line of every shell block, comments and blank lines left out."""
    found = []
    for page in PAGES:
        for block in SHELL_BLOCK.findall(page.read_text(encoding="utf-8")):
            for line in block.splitlines():
                command = re.split(r"\s{2,}#|\s#\s", line, maxsplit=1)[0].strip()
                if command and not command.startswith("#"):
                    found.append((page.name, command.removeprefix("uv run ")))
    return found


def _test_for(command: str) -> tuple[str, str] | None:
    """The longest `RUN_BY` entry the command starts with (so a specific entry wins over a general one)."""
    matches = [prefix for prefix in RUN_BY if command.startswith(prefix)]
    return RUN_BY[max(matches, key=len)] if matches else None


def test_the_pages_show_commands() -> None:
    assert len(_commands()) >= 30


RUNNABLE = [(page, command) for page, command in _commands() if not command.startswith(NEEDS_AN_AWS_ACCOUNT)]


def test_only_bootstrap_deploy_and_destroy_are_left_to_an_aws_account() -> None:
    left = sorted({command.split()[2] for _, command in _commands() if command.startswith(NEEDS_AN_AWS_ACCOUNT)})
    assert left == ["bootstrap", "deploy", "destroy"]


@pytest.mark.parametrize(("page", "command"), RUNNABLE, ids=[f"{p}: {c[:60]}" for p, c in RUNNABLE])
def test_every_command_a_page_shows_is_run_by_a_test(page: str, command: str) -> None:
    found = _test_for(command)
    assert found is not None, f"{page} shows `{command}` and no test runs it: run it in a test, then add it to RUN_BY"
    path, evidence = found
    assert evidence in (ROOT / path).read_text(encoding="utf-8"), f"{path} does not show that it runs `{command}`"


def test_npx_cdk_synth_runs_offline(tmp_path: Path) -> None:
    # `npx cdk synth` as the README gives it, without the Lambda bundle (tests/cdk builds a real one).
    npx = shutil.which("npx")
    if npx is None or not (ROOT / "node_modules" / ".bin" / "cdk").exists():
        pytest.skip("the pinned CDK CLI is not installed (scripts/dev setup installs it)")
    command = [npx, "cdk", "synth", "--quiet", "-c", "agent-wait:bundle=false", "-o", str(tmp_path / "out")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "out" / "RefundAgentStack.template.json").exists()


def test_the_pydantic_ai_router_requirements_export(tmp_path: Path) -> None:
    # docs/frameworks.md: the router's pins for a Pydantic AI agent.
    command = "uv export --frozen --no-dev --extra host --extra pydantic-ai --no-hashes --no-emit-project"
    assert any(command in c for _, c in _commands())
    result = subprocess.run(command.split(), cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    pins = {line.split("==")[0] for line in result.stdout.splitlines() if "==" in line and not line.startswith(" ")}
    assert {"pydantic-ai-slim", "aws-lambda-powertools"} <= pins
    assert "langgraph" not in pins, "a Pydantic AI router installs no LangGraph"


def test_scripts_dev_demo_runs_the_demo_command() -> None:
    # The demo itself is run as a test by tests/packaging/test_journey.py (`agent-wait demo`) and, scenario
    # by scenario, by tests/local; `scripts/dev demo` sets up and then runs that same command.
    script = (ROOT / "scripts" / "dev").read_text(encoding="utf-8")
    demo_branch = script.split("  demo)", 1)[1].split(";;", 1)[0]
    assert "agent-wait demo" in demo_branch
