"""Finding a user's Lambda dependencies the way `PythonFunction` users expect, without running an installer.

`find_dependencies` is tested directly (a folder at a time); `LambdaBundle.for_architecture` for how a found
file is completed and installed; one synthesis for the message that says which file was used.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match
from tests.cdk.conftest import REPO, new_app

from agent_wait_cdk import AgentWait, BundleError, LambdaBundle
from agent_wait_cdk.bundling import REQUIREMENTS_FILE, UV_EXPORT, find_dependencies

X86 = lambda_.Architecture.X86_64

PYPROJECT = """\
[project]
name = "my-agent"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["agent-wait[host]>=0.1", "tiny-model-client==2.0"]
"""

# A lock uv can export offline: `uv export --frozen` reads it and contacts no index.
UV_LOCK = """\
version = 1
revision = 3
requires-python = ">=3.11"

[[package]]
name = "agent-wait"
version = "0.1.0"
source = { registry = "https://pypi.org/simple" }
wheels = [{ url = "https://files.example/agent_wait-0.1.0-py3-none-any.whl", hash = "sha256:%(zeros)s" }]

[[package]]
name = "my-agent"
version = "0.1.0"
source = { virtual = "." }
dependencies = [
    { name = "agent-wait" },
    { name = "tiny-model-client" },
]

[package.metadata]
requires-dist = [
    { name = "agent-wait" },
    { name = "tiny-model-client", specifier = "==%(version)s" },
]

[[package]]
name = "tiny-model-client"
version = "%(version)s"
source = { registry = "https://pypi.org/simple" }
wheels = [{ url = "https://files.example/tiny_model_client-%(version)s-py3-none-any.whl", hash = "sha256:%(zeros)s" }]
"""


def uv_lock(version: str = "2.0") -> str:
    return UV_LOCK % {"version": version, "zeros": "0" * 64}


def needs_uv() -> None:
    if shutil.which("uv") is None:
        pytest.skip("uv is not on PATH")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project folder with a graph package `my_agent`, the working directory of the synth."""
    root = tmp_path / "project"
    (root / "my_agent").mkdir(parents=True)
    (root / "my_agent" / "__init__.py").write_text("")
    (root / "my_agent" / "graph.py").write_text("graph = None\n")
    monkeypatch.chdir(root)
    return root


# The order: requirements.txt, then uv.lock, then pyproject.toml; the first found wins.


def test_requirements_txt_wins_over_uv_lock_and_pyproject(project: Path) -> None:
    # GIVEN all three in one folder
    (project / "requirements.txt").write_text("agent-wait==0.1.0\nlangchain-openai==0.3.1\n")
    (project / "uv.lock").write_text(uv_lock())
    (project / "pyproject.toml").write_text(PYPROJECT)
    # WHEN the folder is searched
    found = find_dependencies([project])
    # THEN requirements.txt is used as it is, without agent-wait's own line
    assert found is not None
    assert found.origin == str(project / "requirements.txt")
    assert found.requirements == "langchain-openai==0.3.1\n"
    assert found.resolve


def test_uv_lock_is_exported_when_there_is_no_requirements_txt(project: Path) -> None:
    needs_uv()
    # GIVEN a uv project
    (project / "uv.lock").write_text(uv_lock())
    (project / "pyproject.toml").write_text(PYPROJECT)
    # WHEN the folder is searched
    found = find_dependencies([project])
    # THEN the lock is exported with uv, and agent-wait's own line is dropped
    assert found is not None
    assert (
        found.origin
        == f"{project / 'uv.lock'}, exported with: uv export --frozen --no-dev --no-hashes --no-emit-project"
    )
    lines = [line for line in found.requirements.splitlines() if not line.lstrip().startswith("#")]
    assert lines == ["tiny-model-client==2.0"]


def test_the_uv_export_command_is_the_documented_one_run_in_the_locks_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    calls: list[tuple[list[str], object]] = []

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append((command, kwargs.get("cwd")))
        return subprocess.CompletedProcess(command, 0, stdout="agent-wait==0.1.0\nhttpx==0.28.1\n", stderr="")

    (project / "uv.lock").write_text("")
    monkeypatch.setattr(shutil, "which", lambda name: f"/opt/bin/{name}")
    monkeypatch.setattr(subprocess, "run", fake_run)
    found = find_dependencies([project])
    assert calls == [(["/opt/bin/uv", *UV_EXPORT], project)]
    assert UV_EXPORT == ("export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project")
    assert found is not None
    assert found.requirements == "httpx==0.28.1\n"


def test_pyproject_dependencies_are_used_last(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT)
    found = find_dependencies([project])
    assert found is not None
    assert found.origin == f"{project / 'pyproject.toml'} [project] dependencies"
    assert found.requirements == "tiny-model-client==2.0\n"


def test_a_pyproject_without_a_project_table_is_passed_over(project: Path) -> None:
    # GIVEN a tool-only pyproject.toml in the graph's folder, and a requirements.txt further on
    (project / "my_agent" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    (project / "requirements.txt").write_text("httpx==0.28.1\n")
    # THEN the search goes on to the next folder
    found = find_dependencies([project / "my_agent", project])
    assert found is not None
    assert found.origin == str(project / "requirements.txt")


def test_the_graph_source_folder_comes_before_the_working_directory(project: Path) -> None:
    (project / "my_agent" / "requirements.txt").write_text("httpx==0.28.1\n")
    (project / "requirements.txt").write_text("requests==2.32.3\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=[project / "my_agent"])
    assert bundle.origin.startswith(str(project / "my_agent" / "requirements.txt"))
    assert "httpx==0.28.1" in bundle.requirements
    assert "requests==2.32.3" not in bundle.requirements


def test_the_working_directory_is_searched_when_the_graph_folder_has_nothing(project: Path) -> None:
    # GIVEN `cdk` run in the project, whose requirements.txt sits at its root
    (project / "requirements.txt").write_text("agent-wait[host]==0.1.0\nlangchain-openai==0.3.1\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"])
    assert bundle.origin.startswith(str(project / "requirements.txt"))
    assert bundle.requirements.startswith("langchain-openai==0.3.1\n")


def test_agent_waits_own_checkout_is_passed_over() -> None:
    # GIVEN this repository's root, which has agent-wait's pyproject.toml and uv.lock
    assert (REPO / "uv.lock").is_file()
    # THEN it is not a user's project: nothing is found there
    assert find_dependencies([REPO]) is None


def test_with_nothing_found_the_runtimes_pins_are_installed_as_they_are(project: Path) -> None:
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"])
    assert bundle.requirements == REQUIREMENTS_FILE.read_text()
    assert not bundle.resolve
    assert bundle.origin == (
        "the runtime's pins (requirements-lambda.txt): none of requirements.txt, uv.lock, pyproject.toml "
        f"in {project / 'my_agent'}, {project}"
    )
    assert "--no-deps" in bundle.install_command(Path("/out"), Path("/req.txt"))


# A found file is completed with the runtime's pins and resolved; a named file is installed as it is.


def test_a_found_file_is_completed_with_the_runtimes_pins_for_what_it_does_not_name(project: Path) -> None:
    (project / "requirements.txt").write_text("agent-wait\nboto3==1.40.0\nlangchain-openai\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"])
    pins = {line.split("==")[0]: line for line in REQUIREMENTS_FILE.read_text().splitlines() if "==" in line}
    lines = bundle.requirements.splitlines()
    # the user's lines first, as written (agent-wait dropped) ...
    assert lines[:2] == ["boto3==1.40.0", "langchain-openai"]
    # ... then the runtime's pins, except for what the user named
    assert pins["aws-lambda-powertools"] in lines
    assert pins["langgraph"] in lines
    assert pins["boto3"] not in lines
    assert bundle.resolve
    assert "--no-deps" not in bundle.install_command(Path("/out"), Path("/req.txt"))


def test_a_named_requirements_file_is_still_installed_as_it_is(project: Path, tmp_path: Path) -> None:
    # GIVEN a requirements.txt in the project, and a pinned closure named explicitly
    (project / "requirements.txt").write_text("requests\n")
    closure = tmp_path / "closure.txt"
    closure.write_text("httpx==0.28.1\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"], requirements_file=closure)
    assert bundle.requirements == "httpx==0.28.1\n"
    assert not bundle.resolve
    assert bundle.origin == f"requirements_file {closure}, installed as it is (--no-deps)"
    assert "--no-deps" in bundle.install_command(Path("/out"), Path("/req.txt"))


# The asset hash follows each kind of file.


@pytest.mark.parametrize("kind", ["requirements.txt", "uv.lock", "pyproject.toml"])
def test_the_asset_hash_changes_when_the_found_file_changes(project: Path, kind: str) -> None:
    if kind == "uv.lock":
        needs_uv()
        (project / "pyproject.toml").write_text(PYPROJECT)
    before, after = {
        "requirements.txt": ("httpx==0.28.1\n", "httpx==0.28.2\n"),
        "uv.lock": (uv_lock("2.0"), uv_lock("2.1")),
        "pyproject.toml": (PYPROJECT, PYPROJECT.replace("==2.0", "==2.1")),
    }[kind]
    (project / kind).write_text(before)
    first = LambdaBundle.for_architecture(X86, graph_source=["my_agent"]).asset_hash()
    assert LambdaBundle.for_architecture(X86, graph_source=["my_agent"]).asset_hash() == first  # stable
    (project / kind).write_text(after)
    assert LambdaBundle.for_architecture(X86, graph_source=["my_agent"]).asset_hash() != first


# Every bad path is one readable error.


def test_a_uv_lock_without_uv_names_the_fix(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "uv.lock").write_text(uv_lock())
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    message = (
        f"found {project / 'uv.lock'} for the Lambda dependencies, but uv is not on PATH to export it; install "
        "uv (pip install uv), or export the requirements yourself (uv export --frozen --no-dev --no-hashes "
        "--no-emit-project > requirements.txt) and pass requirements_file="
    )
    with pytest.raises(BundleError, match=re.escape(message)):
        find_dependencies([project])


def test_a_uv_export_that_fails_is_one_message_with_uvs_reason(project: Path) -> None:
    needs_uv()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "uv.lock").write_text("this is not a lock\n")
    with pytest.raises(BundleError) as caught:
        find_dependencies([project])
    message = str(caught.value)
    assert message.startswith(
        f"exporting {project / 'uv.lock'} failed (exit 2): uv export --frozen --no-dev --no-hashes "
        f"--no-emit-project in {project}\n"
    )
    assert message.endswith(
        "Run `uv lock` if pyproject.toml changed since the lock was written, or pass requirements_file="
    )


def test_a_malformed_pyproject_names_the_file_and_the_fix(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "my-agent"\ndependencies = ["httpx"\n')
    with pytest.raises(BundleError) as caught:
        find_dependencies([project])
    message = str(caught.value)
    assert message.startswith(f"{project / 'pyproject.toml'} is not valid TOML (")
    assert message.endswith("); fix it, or pass requirements_file= to name the Lambda dependencies yourself")


def test_pyproject_dependencies_that_are_not_a_list_of_strings_are_refused(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "my-agent"\ndependencies = "httpx"\n')
    message = (
        f"{project / 'pyproject.toml'}: [project] dependencies must be a list of requirement strings (PEP 621), "
        "such as [\"langchain-openai>=0.3\"]; got 'httpx'"
    )
    with pytest.raises(BundleError, match=re.escape(message)):
        find_dependencies([project])


def test_dynamic_pyproject_dependencies_are_refused_with_the_way_out(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "my-agent"\ndynamic = ["dependencies", "version"]\n')
    message = (
        f"{project / 'pyproject.toml'} declares its [project] dependencies dynamic, which cannot be read without "
        "building the project; list them in a requirements.txt beside it, or pass requirements_file="
    )
    with pytest.raises(BundleError, match=re.escape(message)):
        find_dependencies([project])


def test_the_synth_output_says_which_file_was_used(project: Path) -> None:
    # GIVEN a user's app run in their project, with its requirements.txt
    (project / "requirements.txt").write_text("langchain-openai==0.3.1\n")
    stack = Stack(new_app(), "Mine")
    AgentWait(stack, "AgentWait", graph="my_agent.graph:graph", graph_source=["my_agent"])
    # THEN an info message on the construct names the file and how it is installed
    Annotations.from_stack(stack).has_info(
        "/Mine/AgentWait",
        Match.string_like_regexp(
            re.escape(f"agent-wait: the Lambda bundle's dependencies: {project / 'requirements.txt'}, resolved on top")
        ),
    )


# The CDK app's own requirements are never the graph's; the graph's module's folder is looked in first.

CDK_INIT_REQUIREMENTS = "aws-cdk-lib==2.215.0\nconstructs>=10.0.0,<11.0.0\n"
"""The root `requirements.txt` that `cdk init app --language python` writes: the CDK app's own dependencies."""


def test_the_cdk_apps_own_requirements_txt_is_never_bundled(project: Path) -> None:
    # GIVEN an ordinary CDK app (made by `cdk init`) whose root requirements.txt names aws-cdk-lib and constructs
    (project / "requirements.txt").write_text(CDK_INIT_REQUIREMENTS)
    # WHEN the bundle is planned from it, with the graph in my_agent
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"], graph="my_agent.graph:graph")
    # THEN the app's file is passed over (and said so): the runtime's pins are installed as they are
    assert "aws-cdk-lib" not in bundle.requirements
    assert bundle.requirements == REQUIREMENTS_FILE.read_text()
    assert not bundle.resolve
    assert f"passed over {project / 'requirements.txt'}: it names aws-cdk-lib" in bundle.origin
    assert "the CDK app's own dependencies, never the graph's" in bundle.origin


def test_the_cdk_apps_pyproject_is_passed_over_too_and_the_search_goes_on(project: Path, tmp_path: Path) -> None:
    # GIVEN a CDK app's pyproject.toml at the root, and the graph's own requirements beside its module
    (project / "pyproject.toml").write_text(
        '[project]\nname = "infra"\nversion = "0"\ndependencies = ["aws-cdk-lib>=2", "constructs>=10", "cdk-nag"]\n'
    )
    (project / "my_agent" / "requirements.txt").write_text("httpx==0.28.1\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"], graph="my_agent.graph:graph")
    assert bundle.origin.startswith(str(project / "my_agent" / "requirements.txt"))
    # AND with no file beside the graph, the app's pyproject is still not used
    (project / "my_agent" / "requirements.txt").unlink()
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"], graph="my_agent.graph:graph")
    assert "aws-cdk-lib" not in bundle.requirements
    assert f"passed over {project / 'pyproject.toml'} [project] dependencies: it names aws-cdk-lib" in bundle.origin


def test_the_folder_of_the_graphs_module_is_looked_in_before_the_graph_source_folder(project: Path) -> None:
    # GIVEN graph_source `src`, the graph `src.my_agent.graph`, a requirements.txt in each folder
    src = project / "src"
    src.mkdir()
    (project / "my_agent").rename(src / "my_agent")
    (src / "requirements.txt").write_text("requests==2.32.3\n")
    (src / "my_agent" / "requirements.txt").write_text("httpx==0.28.1\n")
    # WHEN the bundle is planned
    bundle = LambdaBundle.for_architecture(X86, graph_source=["src"], graph="src.my_agent.graph:graph")
    # THEN the file beside the graph's module wins
    assert bundle.origin.startswith(str(src / "my_agent" / "requirements.txt"))
    assert "httpx==0.28.1" in bundle.requirements
    assert "requests==2.32.3" not in bundle.requirements


def test_a_bundle_over_lambdas_limit_names_the_requirements_it_came_from(tmp_path: Path) -> None:
    from agent_wait_cdk.bundling.bundle import check_size

    (tmp_path / "big").write_bytes(b"x" * 2000)
    origin = "/app/requirements.txt, resolved on top of the runtime's pins for what it does not name"
    with pytest.raises(BundleError) as caught:
        check_size(tmp_path, limit=1000, origin=origin)
    assert f"The bundle's requirements: {origin}." in str(caught.value)


def test_a_failed_install_names_the_requirements_it_came_from(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess

    def failing(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 1, stdout="", stderr="ERROR: No matching distribution for x\n")

    (project / "my_agent" / "requirements.txt").write_text("x==1\n")
    bundle = LambdaBundle.for_architecture(X86, graph_source=["my_agent"], graph="my_agent.graph:graph")
    monkeypatch.setattr(subprocess, "run", failing)
    with pytest.raises(BundleError) as caught:
        bundle.build(tmp_path / "out")
    assert f"The bundle's requirements: {project / 'my_agent' / 'requirements.txt'}, resolved" in str(caught.value)


def test_the_synth_output_says_the_cdk_apps_requirements_were_passed_over(project: Path) -> None:
    (project / "requirements.txt").write_text(CDK_INIT_REQUIREMENTS)
    stack = Stack(new_app(), "Mine")
    AgentWait(stack, "AgentWait", graph="my_agent.graph:graph", graph_source=["my_agent"])
    Annotations.from_stack(stack).has_info(
        "/Mine/AgentWait",
        Match.string_like_regexp(re.escape(f"passed over {project / 'requirements.txt'}: it names aws-cdk-lib")),
    )
