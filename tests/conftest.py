"""Shared fixtures: fake AWS credentials, an embedded moto server over real HTTP, unique ids."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from tests.support.shared_loader import share_one_loader

# The AWS resources on the emulator, real-shaped SQS events and a Lambda context, for every folder.
pytest_plugins = ("tests.support.aws_stack",)

# Never let a test reach a real AWS account or the instance metadata service.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentWaitTests",
        "POWERTOOLS_SERVICE_NAME": "agent-wait-tests",
        "POWERTOOLS_DEV": "false",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }
)
os.environ.pop("AWS_PROFILE", None)

# A test process builds clients thousands of times; they parse botocore's models once (tests/support/shared_loader.py).
share_one_loader()

# The fuzz tests (Hypothesis) explore new examples on every developer's run, and keep what fails in .hypothesis/. CI
# starts from a clean clone with no such database, so there they run a fixed set of examples: a run that lands is not
# failed at random by an example no one has seen, and one that fails fails again. `CI=true pytest` reproduces it.
hypothesis.settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    hypothesis.settings.load_profile("ci")

REGION = "us-east-1"


@pytest.fixture(autouse=True)
def _no_powertools_metrics_left_over() -> None:
    """Start each test with Powertools' metric state empty.

    Every `Metrics` of a process shares one metric, dimension and metadata set; a test that stopped mid-handler (an
    injected crash) leaves its dimensions there, and the next test's metrics would carry them. Only modules already
    imported are touched: this imports nothing."""
    import sys

    for name in ("agent_wait.host.router", "agent_wait.host.sweep", "agent_wait.host.api"):
        metrics = getattr(sys.modules.get(name), "metrics", None)
        if metrics is not None and hasattr(metrics, "clear_metrics"):
            metrics.clear_metrics()


@pytest.fixture(autouse=True)
def _no_log_handler_on_a_closed_stream() -> None:
    """Point any log handler left writing to a closed stream at this test's stdout.

    Powertools gives a service's logger one `StreamHandler` on the `sys.stdout` of the moment its first `Logger` is
    made. When that happens inside a test that captures output (`capsys`), the handler keeps the capture's stream,
    which pytest closes after that test; every later test in the process that logs through it then prints a
    "Logging error" traceback to stderr (found as four CLI tests of tests/local/test_local_api.py failing whenever the
    module ran in one process). Lambda and `agent-wait dev` never swap `sys.stdout`, so this is the tests' alone."""
    import logging
    import sys

    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", ()):
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and getattr(stream, "closed", False):
                handler.stream = sys.stdout  # not setStream: it flushes the old stream first, which raises once closed


@pytest.fixture(scope="session")
def _running_devs_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(autouse=True)
def _own_running_devs(_running_devs_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give each test its own registry of running `agent-wait dev`s (`XDG_STATE_HOME`): a dev started by a test in
    another worker, or by the person at this machine, must not be the stack a test's CLI finds. A fresh name under
    one folder, made only when a dev registers: `mktemp` per test lists every folder it made before, which over the
    suite's thousands of tests cost more than the tests of a whole folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(_running_devs_home / uuid.uuid4().hex))


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """An embedded moto server on 127.0.0.1 at a random port; yields its endpoint URL.

    boto3 clients pointed at it go over a real HTTP connection. State is shared for the session, so
    tests use unique resource names (`unique`).
    """
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_client(moto_server: str) -> Any:
    """`aws_client("sqs")`: a boto3 client for the embedded moto server."""
    import boto3

    def make(service: str) -> Any:
        return boto3.client(service, region_name=REGION, endpoint_url=moto_server)

    return make


@pytest.fixture
def unique() -> str:
    """A short unique suffix for resource names and ids."""
    return uuid.uuid4().hex[:12]


# -- depth: every test is marked by how deep it reaches, so a focused run is one command -----------------------

DEPTH_BY_FOLDER = {"browser": "browser", "packaging": "packaging", "cdk": "synth"}
"""Folders whose every test has one depth; elsewhere a test is `emulator` if it uses the moto server, else `unit`."""
EMULATOR_FIXTURES = frozenset({"moto_server", "aws_client", "host", "question_table"})
"""Fixtures that reach the embedded moto server (directly or through another fixture)."""
SHARED_SETUP_GROUPS = frozenset({"browser", "packaging", "synth"})
"""Depths whose tests share a costly session or module setup (a Chromium and a stack, a built wheel, a jsii kernel):
under pytest-xdist each runs on one worker (`--dist loadgroup`), so the setup is paid once."""


def depth_of(item: pytest.Item) -> str:
    """`unit`, `emulator`, `browser`, `packaging` or `synth`: how deep a test reaches."""
    parts = item.path.parts
    folder = parts[parts.index("tests") + 1] if "tests" in parts and parts.index("tests") + 1 < len(parts) else ""
    if folder in DEPTH_BY_FOLDER:
        return DEPTH_BY_FOLDER[folder]
    fixtures = set(getattr(item, "fixturenames", ()))
    if folder == "local" or fixtures & EMULATOR_FIXTURES:
        return "emulator"
    return "unit"


LONGEST_FIRST = ("packaging", "browser", "synth")
"""The one-worker groups, longest first: handed out before everything else, so the other workers share the rest
while one runs them, instead of one group starting last and running on alone (the CI's long tail)."""


# tryfirst: xdist's worker names a test's group from its `xdist_group` mark in its own collection hook, which pytest
# calls before a conftest's (the plugin registers later); marked after it, no group formed and every worker paid
# each shared setup (the packaging journey twice, a Chromium stack per worker). pyproject.toml holds pytest below
# 9.2 for the same reason (xdist cannot name the group under 9.2's node ids).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    depths = {}
    for item in items:
        depth = depths[item.nodeid] = depth_of(item)
        item.add_marker(getattr(pytest.mark, depth))
        if depth in SHARED_SETUP_GROUPS:
            item.add_marker(pytest.mark.xdist_group(depth))
    first = {depth: rank for rank, depth in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(depths[item.nodeid], len(first)))  # stable: order within a depth kept


# -- where the time goes ----------------------------------------------------------------------------------------


_SECONDS_BY_FOLDER: dict[str, float] = {}
"""Seconds spent in each test folder (setup, call and teardown), summed over the workers' reports."""
_CPU_BY_FOLDER: dict[str, float] = {}
"""CPU-seconds spent in each test folder: the test process's own, and its subprocesses' that ended meanwhile."""
_CPU_BY_TEST: dict[str, float] = {}
CPU_PROPERTY = "cpu_seconds"
"""The report's user property that carries a phase's CPU-seconds from an xdist worker to the controller."""
SLOWEST_BY_CPU = 25
PHASES = ("setup", "call", "teardown")


def _cpu_seconds() -> float:
    """User and system CPU of this process and of the children it has waited for. On a shared machine a test's
    wall time says how busy the machine was; its CPU says what the test costs."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    started = item.stash.get(_CPU_AT_START, None)
    if started is not None:
        report.user_properties.append((CPU_PROPERTY, _cpu_seconds() - started))


_CPU_AT_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    item.stash[_CPU_AT_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    item.stash[_CPU_AT_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    item.stash[_CPU_AT_START] = _cpu_seconds()
    yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    folder = report.nodeid.split("::")[0].rpartition("/")[0] or "tests"
    _SECONDS_BY_FOLDER[folder] = _SECONDS_BY_FOLDER.get(folder, 0.0) + report.duration
    cpu = sum(value for name, value in report.user_properties if name == CPU_PROPERTY and isinstance(value, float))
    _CPU_BY_FOLDER[folder] = _CPU_BY_FOLDER.get(folder, 0.0) + cpu
    key = f"{report.when:8} {report.nodeid}"
    _CPU_BY_TEST[key] = _CPU_BY_TEST.get(key, 0.0) + cpu


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the test time and CPU by folder, largest first, and the phases that cost the most CPU, so a slow CI
    run says where its minutes went (a subprocess's CPU counts once it ended; a server thread's, where it ran)."""
    if not _SECONDS_BY_FOLDER:
        return
    total, cpu = sum(_SECONDS_BY_FOLDER.values()), sum(_CPU_BY_FOLDER.values())
    terminalreporter.section("test time and CPU by folder (summed over workers)")
    for folder, seconds in sorted(_SECONDS_BY_FOLDER.items(), key=lambda item: -item[1]):
        spent = _CPU_BY_FOLDER.get(folder, 0.0)
        shares = f"{100 * seconds / total:5.1f} %  {spent:8.1f} CPU-s  {100 * spent / (cpu or 1):5.1f} %"
        terminalreporter.write_line(f"{seconds:8.1f} s  {shares}  {folder}")
    terminalreporter.write_line(f"{total:8.1f} s  in all    {cpu:8.1f} CPU-s in all")
    by_phase = {when: sum(v for k, v in _CPU_BY_TEST.items() if k.startswith(when)) for when in PHASES}
    terminalreporter.write_line("CPU-s by phase: " + ", ".join(f"{when} {by_phase[when]:.1f}" for when in PHASES))
    terminalreporter.section(f"the {SLOWEST_BY_CPU} costliest phases by CPU-seconds")
    for key, spent in sorted(_CPU_BY_TEST.items(), key=lambda item: -item[1])[:SLOWEST_BY_CPU]:
        terminalreporter.write_line(f"{spent:8.2f} CPU-s  {key}")
