"""Lambda code without Docker: what goes in the bundle, the asset hash, and one real bundle."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template
from tests.cdk.conftest import EXAMPLES, Synth, new_app

from agent_wait_cdk import AgentWait, AnswerApiProps, BundleError, LambdaBundle
from agent_wait_cdk.bundling import REQUIREMENTS_FILE, RUNTIME_AWS_SERVICES, find_lambda_python, left_out

X86, ARM = lambda_.Architecture.X86_64, lambda_.Architecture.ARM_64


@pytest.fixture
def graph_dir(tmp_path: Path) -> Path:
    source = tmp_path / "svc"
    source.mkdir()
    (source / "__init__.py").write_text("")
    (source / "agent.py").write_text("graph = 1\n")
    return source


def test_asset_hash_changes_when_a_pinned_dependency_changes(graph_dir: Path, tmp_path: Path) -> None:
    bumped = tmp_path / "requirements.txt"
    text = REQUIREMENTS_FILE.read_text()
    pin = next(line for line in text.splitlines() if line.startswith("langgraph=="))
    bumped.write_text(text.replace(pin, pin + ".post1"))
    base = LambdaBundle.for_architecture(X86, graph_source=[graph_dir])
    assert LambdaBundle.for_architecture(X86, graph_source=[graph_dir], requirements_file=bumped).asset_hash() != (
        base.asset_hash()
    )


def test_asset_hash_changes_with_the_graph_source_and_the_architecture(graph_dir: Path) -> None:
    before = LambdaBundle.for_architecture(X86, graph_source=[graph_dir]).asset_hash()
    assert LambdaBundle.for_architecture(X86, graph_source=[graph_dir]).asset_hash() == before  # stable
    assert LambdaBundle.for_architecture(ARM, graph_source=[graph_dir]).asset_hash() != before
    (graph_dir / "__pycache__").mkdir()
    (graph_dir / "__pycache__" / "agent.cpython-313.pyc").write_bytes(b"\0")
    assert LambdaBundle.for_architecture(X86, graph_source=[graph_dir]).asset_hash() == before  # caches ignored
    (graph_dir / "agent.py").write_text("graph = 2\n")
    assert LambdaBundle.for_architecture(X86, graph_source=[graph_dir]).asset_hash() != before


def test_the_router_and_the_sweep_share_one_asset_and_the_answer_api_has_its_own(refund: Synth) -> None:
    # GIVEN the refund stack (router, sweep, answer API) / WHEN synthesized
    keys = {
        fn["Properties"]["Handler"]: fn["Properties"]["Code"]["S3Key"]
        for fn in refund.resources("AWS::Lambda::Function").values()
        if str(fn["Properties"].get("Handler", "")).startswith("agent_wait.host.")
    }
    # THEN one asset serves the router and the sweep, and the answer API's is another (a bundle per function)
    assert keys["agent_wait.host.router.handler"] == keys["agent_wait.host.sweep.handler"]
    assert keys["agent_wait.host.api.handler"] != keys["agent_wait.host.router.handler"]


def test_each_function_leaves_out_what_only_other_functions_or_unused_channels_import() -> None:
    # GIVEN no channel / WHEN each function's asset is planned / THEN the router and the sweep leave out AG-UI, Slack,
    # Jinja2 and the answer API's routes, and every function the emulator and the console script
    runtime_only = ("agent_wait/local", "agent_wait/cli", "agent_wait/testing")
    assert left_out("router") == left_out("sweep")
    assert left_out("router") == (
        "a2a-sdk",
        "ag-ui-protocol",
        "jinja2",
        "mcp",
        "pywebpush",
        "slack-sdk",
        "webauthn",
        "agent_wait/host/api",
        *runtime_only,
    )
    assert left_out("api") == ("a2a-sdk", "jinja2", "mcp", "pywebpush", "slack-sdk", "webauthn", *runtime_only)
    # AND a channel turned on keeps its library in every function: Slack's SDK, email's and shaped webhooks' Jinja2
    assert "slack-sdk" not in left_out("router", ["slack"]) + left_out("api", ["slack"])
    assert "jinja2" not in left_out("sweep", ["email"]) + left_out("router", ["shaped"]) + left_out("api", ["email"])
    assert "jinja2" in left_out("router", ["slack", "teams"])


def test_a_function_asset_hashes_apart_from_the_whole_install_and_the_router_and_sweep_alike(graph_dir: Path) -> None:
    whole = LambdaBundle.for_architecture(X86, graph_source=[graph_dir])
    router, sweep, api = (whole.for_function(name) for name in ("router", "sweep", "api"))
    assert router.asset_hash() == sweep.asset_hash()
    assert len({whole.asset_hash(), router.asset_hash(), api.asset_hash()}) == 3
    assert whole.for_function("router", channels=["slack"]).asset_hash() != router.asset_hash()
    with pytest.raises(BundleError, match=re.escape("function must be one of ['router', 'sweep', 'api']; got 'web'")):
        whole.for_function("web")


def _code_keys(requirements: Path | None) -> set[str]:
    stack = Stack(new_app(), "S")
    AgentWait(stack, "AgentWait", graph="m:g", requirements_file=requirements)
    template = Template.from_stack(stack).to_json()
    return {
        r["Properties"]["Code"]["S3Key"] for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"
    }


def test_the_deployed_asset_changes_when_a_pin_changes(tmp_path: Path) -> None:
    """The CDK asset hash derives from the custom hash: a new pin means a new S3 key, so a deploy updates code."""
    bumped = tmp_path / "requirements.txt"
    bumped.write_text(REQUIREMENTS_FILE.read_text().replace("langgraph==", "langgraph==0.0.0+"))
    keys = [_code_keys(requirements) for requirements in (None, REQUIREMENTS_FILE, bumped)]
    assert keys[0] == keys[1]
    assert keys[0] != keys[2]


def test_the_deployed_asset_changes_when_a_found_requirements_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without requirements_file, the file found in the working directory decides the S3 key the same way."""
    monkeypatch.chdir(tmp_path)
    nothing_found = _code_keys(None)
    (tmp_path / "requirements.txt").write_text("httpx==0.28.1\n")
    found = _code_keys(None)
    (tmp_path / "requirements.txt").write_text("httpx==0.28.2\n")
    bumped = _code_keys(None)
    assert len({frozenset(nothing_found), frozenset(found), frozenset(bumped)}) == 3


@pytest.mark.parametrize(("architecture", "platform"), [(X86, "x86_64"), (ARM, "aarch64")])
def test_uv_installs_for_the_lambda_platform(architecture: lambda_.Architecture, platform: str) -> None:
    bundle = LambdaBundle.for_architecture(architecture)
    command = bundle.install_command(Path("/out"), Path("/req.txt"))
    if shutil.which("uv") is None:
        pytest.skip("uv is not on PATH")
    joined = " ".join(command)
    assert f"--python-platform {platform}-manylinux_2_34" in joined
    assert "--python-version 3.13" in joined
    assert "--only-binary :all:" in joined
    assert "--no-binary http-ece" in joined  # pure Python, and PyPI has no wheel of it: built from its source
    assert "--no-deps" in joined
    assert "--target /out -r /req.txt" in joined


def test_pip_is_the_fallback_without_uv_and_accepts_every_glibc_lambda_can_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    command = " ".join(LambdaBundle.for_architecture(ARM).install_command(Path("/out"), Path("/req.txt")))
    assert "-m pip install" in command
    assert "--platform manylinux_2_34_aarch64 --platform manylinux_2_33_aarch64" in command
    # pip takes a platform literally: without the older tags a wheel published as manylinux_2_17 is invisible
    assert "--platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 --implementation cp" in command
    assert "manylinux_2_16_aarch64" not in command, "no aarch64 wheel is older than glibc 2.17"
    x86 = " ".join(LambdaBundle.for_architecture(X86).install_command(Path("/out"), Path("/req.txt")))
    assert "--platform manylinux_2_5_x86_64 --platform manylinux2014_x86_64" in x86
    assert "--platform manylinux1_x86_64 --implementation cp --python-version 3.13" in x86
    assert "--only-binary=:all:" in command
    assert "--no-binary http-ece" in command


@pytest.mark.slow
def test_without_uv_pip_installs_a_wheel_published_only_for_an_older_glibc(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """orjson 3.10.18 publishes its Linux wheels as manylinux_2_17 only: pip found none for manylinux_2_34 alone
    (`No matching distribution found`), so no pip user could synthesize a stack (issue 26)."""
    import subprocess
    import sys

    from agent_wait_cdk.bundling.install import install

    # A pip user's interpreter: this checkout's virtualenv is uv's and has no pip; the Python it was made from has.
    python = sys._base_executable  # pyright: ignore[reportAttributeAccessIssue]
    if subprocess.run([python, "-m", "pip", "--version"], check=False, capture_output=True).returncode:
        pytest.skip(f"{python} has no pip")
    monkeypatch.setattr(sys, "executable", python)
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    install("x86_64", "orjson==3.10.18\n", tmp_path)
    assert any(path.name.startswith("orjson") for path in tmp_path.iterdir()), sorted(
        p.name for p in tmp_path.iterdir()
    )


def test_a_missing_graph_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"graph_source .*nowhere.* does not exist"):
        LambdaBundle.for_architecture(X86, graph_source=[tmp_path / "nowhere"])


def test_graph_sources_must_not_clash_with_the_runtime(tmp_path: Path) -> None:
    (tmp_path / "agent_wait").mkdir()
    with pytest.raises(BundleError, match=r"distinct names, other than agent_wait; clash: \['agent_wait'\]"):
        LambdaBundle.for_architecture(X86, graph_source=[tmp_path / "agent_wait"])


_READY = """
import json, sys, time
started = time.perf_counter()
import agent_wait.host.router as r
imported = time.perf_counter() - started
router = r._router()  # what the first invocation does: settings, clients, the graph, the checkpoint saver
ready = time.perf_counter() - started
unneeded = ("langgraph.prebuilt", "aws_lambda_powertools.utilities.data_classes.alb_event", "aws_xray_sdk.core")
unused = [m for m in unneeded if m in sys.modules]  # what the router's cold start has no use for
import agent_wait.host.sweep as s, boto3, langgraph.graph as g, pydantic_core
session = boto3.Session()
clients = [session.client(service).meta.service_model.service_name for service in sys.argv[1].split(",")]
start = json.dumps({"thread_id": "t-bundle", "input": {"order_id": "o-bundle", "amount": 900}})
outcome = router.handle(start, message_id="m-bundle", deduplication_id="d-bundle", group_id="t-bundle")
print(json.dumps({"handlers": [callable(r.handler), callable(s.handler)],
                  "outcome": outcome.kind.value,
                  "asked": list(outcome.asked),
                  "clients": clients, "imported": imported, "ready": ready,
                  "files": [r.__file__, g.__file__, pydantic_core.__file__],
                  "savers": sorted(m for m in sys.modules if m.startswith("langgraph_checkpoint_aws.checkpoint.")),
                  "unused": unused}))
"""
"""Run in the router's asset by its Python 3.13: the router's cold start (timed), a client for each of the runtime's
AWS services (their botocore models survived pruning), and one start message handled on the emulator."""

_ANSWERED = """
import json, sys
import agent_wait.host.api as api
claims = {"iss": "https://issuer.example.com", "sub": "u-fin", "email": "fin@example.com", "email_verified": "true"}
path = f"/questions/{sys.argv[1]}/answer"
event = {"version": "2.0", "rawPath": path, "rawQueryString": "", "headers": {"content-type": "application/json"},
         "requestContext": {"http": {"method": "POST", "path": path}, "requestId": "r", "stage": "$default",
                            "authorizer": {"jwt": {"claims": claims}}},
         "body": json.dumps({"answer": {"action": "approve"}}), "isBase64Encoded": False}
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "api", 512, "r"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"
response = api.handler(event, Context())
print(json.dumps({"status": response["statusCode"], "ag_ui": "ag_ui" in sys.modules}))
"""
"""Run in the answer API's asset: its handler answers the question the router's asset parked."""


@pytest.mark.slow
def test_a_real_bundle_holds_the_runtime_its_dependencies_and_the_graph(tmp_path: Path, moto_server: str) -> None:
    """pip-for-Lambda on the host, no Docker, pruned; under Python 3.13 the router's asset builds the router and runs
    it, and the answer API's, copied from the same install, answers the question it asked."""
    app = App(outdir=str(tmp_path / "cdk.out"), builtin_cloud_formation_validation=False)
    stack = Stack(app, "Bundled")
    started = time.monotonic()  # CDK stages (bundles) an asset when the function binds it, not at synth
    agent = AgentWait(
        stack,
        "AgentWait",
        graph="examples.refund_agent.graph:build_graph",
        graph_source=[EXAMPLES],
        answer_api=True,
        answer_api_props=AnswerApiProps(jwt_issuer="https://issuer.example.com", jwt_audience=["approvals"]),
    )
    assembly = app.synth()
    elapsed = time.monotonic() - started
    assert agent.bundle is not None
    out = Path(assembly.directory)
    template = json.loads((out / "Bundled.template.json").read_text())
    paths = {
        key: f["source"]["path"] for key, f in json.loads((out / "Bundled.assets.json").read_text())["files"].items()
    }
    assets = {  # each function's handler -> its bundled asset folder, through the asset's hash
        r["Properties"]["Handler"]: out / paths[r["Properties"]["Code"]["S3Key"].removesuffix(".zip")]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and str(r["Properties"].get("Handler", "")).startswith("agent_wait.")
    }
    asset, api_asset = assets["agent_wait.host.router.handler"], assets["agent_wait.host.api.handler"]
    assert assets["agent_wait.host.sweep.handler"] == asset, "the router and the sweep share one asset"
    assert asset.is_dir(), sorted(p.name for p in Path(assembly.directory).iterdir())
    # The router's asset leaves out what only the answer API, or a channel this stack does not use, imports.
    never = ("slack_sdk", "jinja2", "markupsafe", "ag_ui", "agent_wait/host/api", "agent_wait/local", "agent_wait/cli")
    assert [path for path in never if (asset / path).exists()] == []
    assert [path for path in ("ag_ui", "agent_wait/host/api/pages") if not (api_asset / path).exists()] == []

    for path in ("agent_wait/__init__.py", "agent_wait/host/router.py", "agent_wait/host/sweep.py",
                 "examples/refund_agent/stack.py", "langgraph", "langgraph_checkpoint_aws", "aws_lambda_powertools",
                 "boto3", "pydantic_core", "aws_xray_sdk"):  # fmt: skip
        assert (asset / path).exists(), f"{path} is not in the bundle"
    assert not (asset / "bin").exists()
    for path in ("jsonschema/tests", "wrapt-stubs", "botocore/data/rds", "botocore/data/sqs/2012-11-05/examples-1.json",
                 "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui-bundle.min.js"):  # fmt: skip
        assert not (asset / path).exists(), f"{path} should have been pruned"
    assert (asset / "langgraph_checkpoint_aws" / "_agent_wait_eager.py").is_file(), "the saver package is not lazy"
    python = find_lambda_python()
    compiled = {p.name.split(".")[-2] for p in asset.rglob("*.pyc")}
    assert compiled <= {"cpython-313"}, f"bytecode for another Python ships: {sorted(compiled)}"
    if python is not None:  # Python 3.13 bytecode ships when a Python 3.13 built the bundle
        assert (asset / "agent_wait" / "host" / "__pycache__" / "router.cpython-313.pyc").is_file()
        assert (asset / "langgraph" / "graph" / "__pycache__" / "state.cpython-313.pyc").is_file()
    binaries = [p.name for p in (asset / "pydantic_core").glob("*.so")]
    assert binaries, "pydantic_core's compiled module is missing"
    assert all("cpython-313-x86_64-linux-gnu" in name for name in binaries), binaries

    if shutil.which("strip") and shutil.which("readelf"):  # libraries ship without debug sections
        unstripped = [p.name for p in asset.rglob("*.so*") if p.is_file() and _has_debug_sections(p)]
        assert unstripped == [], unstripped
    size_mb = sum(p.stat().st_size for p in asset.rglob("*") if p.is_file()) / 1e6
    api_mb = sum(p.stat().st_size for p in api_asset.rglob("*") if p.is_file()) / 1e6
    assert size_mb < 250, f"bundle is {size_mb:.0f} MB; Lambda allows 250 MB unzipped"
    bytecode = "with Python 3.13 bytecode" if python else "no bytecode (no Python 3.13 here)"
    print(f"\nbundles: the router's {size_mb:.1f} MB, the API's {api_mb:.1f} MB, {bytecode}, synth {elapsed:.1f} s")

    if python is None:
        pytest.skip("no Python 3.13 here to import the bundle with; its files were checked")
    env = {**_router_settings(moto_server), "PATH": os.environ["PATH"], "PYTHONPATH": str(asset),
           "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip  # Lambda's /var/task is read-only: no bytecode written
    result = subprocess.run(
        [python, "-s", "-c", _READY, ",".join(sorted(RUNTIME_AWS_SERVICES))],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ran = json.loads(result.stdout.strip().splitlines()[-1])
    assert ran["handlers"] == [True, True]  # the router's and the sweep's: one asset
    assert ran["outcome"] == "started", ran
    assert len(ran["asked"]) == 1, ran  # the refund over the limit parked on finance's question (checkpointed)
    assert len(ran["clients"]) == len(RUNTIME_AWS_SERVICES)
    assert all(name.startswith("langgraph_checkpoint_aws.checkpoint.dynamodb") or name.endswith(".valkey")
               for name in ran["savers"]), ran["savers"]  # fmt: skip  # the one saver the router uses, no other
    # no prebuilt agents for a graph without tools, one event class, no X-Ray recorder while tracing is off
    assert ran["unused"] == [], ran["unused"]
    for file in ran["files"]:  # the runtime, a pure dependency and a compiled one all load from the bundle
        assert file.startswith(str(asset)), file
    print(
        f"router cold start in the bundle (Python 3.13, {bytecode}): import {ran['imported']:.2f} s, "
        f"ready {ran['ready']:.2f} s (figures, not asserted; compare with bench/bench_cold_start.py)"
    )
    # AND the answer API's asset answers the question the router asked, without importing AG-UI's shapes
    answered = subprocess.run(
        [python, "-s", "-c", _ANSWERED, ran["asked"][0]],
        env={**env, "PYTHONPATH": str(api_asset)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert answered.returncode == 0, answered.stderr[-3000:]
    assert json.loads(answered.stdout.strip().splitlines()[-1]) == {"status": 200, "ag_ui": False}


def _router_settings(endpoint: str) -> dict[str, str]:
    """The router's environment, as AgentWait sets it, on fresh resources in the emulator at `endpoint`."""
    import boto3

    from agent_wait.contract.schema import CHECKPOINT_TABLE, QUESTION_TABLE, Settings

    name = f"bundle-{uuid.uuid4().hex[:8]}"
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
    dynamodb.create_table(**QUESTION_TABLE.create_table_request(f"{name}-questions"))
    dynamodb.create_table(**CHECKPOINT_TABLE.create_table_request(f"{name}-checkpoints"))
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    boto3.client("events", endpoint_url=endpoint).create_event_bus(Name=name)
    aws = {key: value for key, value in os.environ.items() if key.startswith(("AWS_", "POWERTOOLS_"))}
    return {
        **aws,
        "AWS_ENDPOINT_URL": endpoint,
        "REFUND_TABLE": f"{name}-refunds",
        Settings.GRAPH.value: "examples.refund_agent.graph:build_graph",
        Settings.TABLE.value: f"{name}-questions",
        Settings.CHECKPOINT_TABLE.value: f"{name}-checkpoints",
        Settings.QUEUE_URL.value: sqs.create_queue(QueueName=f"{name}.fifo", Attributes=fifo)["QueueUrl"],
        Settings.DLQ_URL.value: sqs.create_queue(QueueName=f"{name}-dlq.fifo", Attributes=fifo)["QueueUrl"],
        Settings.TOPIC_ARN.value: boto3.client("sns", endpoint_url=endpoint).create_topic(Name=name)["TopicArn"],
        Settings.BUS_NAME.value: name,
    }


def _has_debug_sections(library: Path) -> bool:
    """Whether the ELF file has a `.debug_*` section (its section headers, as binutils' readelf lists them)."""
    listed = subprocess.run(["readelf", "-S", "--wide", str(library)], capture_output=True, text=True, check=False)
    return any(" .debug_" in line for line in listed.stdout.splitlines())


def test_a_requirements_file_that_names_agent_wait_itself_works(graph_dir: Path, tmp_path: Path) -> None:
    # GIVEN the requirements a user exported from their project, which depends on agent-wait
    exported = tmp_path / "requirements.txt"
    exported.write_text(
        "agent-wait[host]==0.1.0\nAgent_Wait @ file:///src/agent-wait\n-e .\n"
        "langgraph==1.2.24\nboto3==1.40.0 ; python_version >= '3.9'\n"
    )
    bundle = LambdaBundle.for_architecture(X86, graph_source=[graph_dir], requirements_file=exported)
    # THEN agent-wait is left to the bundled runtime source, and the rest is installed as written
    assert bundle.requirements == "langgraph==1.2.24\nboto3==1.40.0 ; python_version >= '3.9'\n"


def test_an_unreadable_requirements_file_is_one_message(graph_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"requirements_file '.*missing.txt' cannot be read \(No such file"):
        LambdaBundle.for_architecture(X86, graph_source=[graph_dir], requirements_file=tmp_path / "missing.txt")


def test_a_bundle_over_lambdas_limit_fails_naming_the_five_largest_entries(tmp_path: Path) -> None:
    from agent_wait_cdk.bundling.bundle import check_size

    for name, size in (
        ("torch", 9000),
        ("numpy", 3000),
        ("pandas", 2500),
        ("scipy", 2000),
        ("boto3", 1000),
        ("six", 10),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "blob").write_bytes(b"\0" * size)
    check_size(tmp_path, limit=20_000)  # under the limit: nothing to say
    with pytest.raises(BundleError) as caught:
        check_size(tmp_path, limit=10_000)
    message = str(caught.value)
    assert message.startswith("the Lambda bundle is 0 MB unzipped; Lambda allows 0 MB. The largest: torch 0 MB")
    assert all(name in message for name in ("torch", "numpy", "pandas", "scipy", "boto3"))
    assert "six" not in message
    assert "\n" not in message


def test_any_app_can_skip_bundling_with_the_constructs_own_context(graph_dir: Path, tmp_path: Path) -> None:
    # GIVEN a user's own app (not this repository's app.py) with the context switch
    app = App(outdir=str(tmp_path / "cdk.out"), context={"agent-wait:bundle": "false"})
    stack = Stack(app, "Mine")
    agent = AgentWait(stack, "AgentWait", graph="svc.agent:graph", graph_source=[graph_dir])
    assembly = app.synth()
    # THEN nothing was installed: the asset is the runtime source as it is
    assert agent.bundle is not None
    manifest = json.loads((Path(assembly.directory) / "Mine.assets.json").read_text())
    (asset,) = [f for f in manifest["files"].values() if f["source"].get("packaging") == "zip"]
    staged = Path(assembly.directory) / asset["source"]["path"]
    assert (staged / "host" / "router.py").is_file()
    assert not (staged / "aws_lambda_powertools").exists()
    assert not (staged / "boto3").exists()
