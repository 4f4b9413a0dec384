"""The bundle drops what no function reads, and imports the one checkpoint saver the router uses."""

from __future__ import annotations

import dataclasses
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import aws_lambda as lambda_

from agent_wait_cdk import BundleError, LambdaBundle
from agent_wait_cdk.bundling import (
    LAZY_PACKAGES,
    PRUNED,
    RUNTIME_AWS_SERVICES,
    compile_bytecode,
    lazy_package_init,
    prune_bundle,
)


def _write(root: Path, *paths: str) -> None:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")


def test_each_pruned_kind_is_dropped_and_the_runtime_and_graph_source_are_not(tmp_path: Path) -> None:
    # GIVEN an installed bundle with one file of every pruned kind, and the same kinds in the runtime and graph
    _write(
        tmp_path,
        "jsonschema/tests/test_validators.py",
        "jsonschema/validators.py",
        "rpds/__init__.pyi",
        "wrapt-stubs/__init__.pyi",
        "wrapt/_wrappers.c",
        "botocore/data/dynamodb/2012-08-10/examples-1.json",
        "botocore/data/dynamodb/2012-08-10/service-2.json.gz",
        "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui-bundle.min.js",
        "aws_lambda_powertools/event_handler/openapi/swagger_ui/html.py",
        "agent_wait/tests/keep.py",
        "agent_wait/types.pyi",
        "svc/tests/test_graph.py",
    )

    # WHEN it is pruned, the runtime and the graph source kept
    dropped = prune_bundle(tmp_path, keep=frozenset({"agent_wait", "svc"}))

    # THEN each kind is gone, for its own reason, and what loads stays
    gone = ["jsonschema/tests", "rpds/__init__.pyi", "wrapt-stubs", "wrapt/_wrappers.c",
            "botocore/data/dynamodb/2012-08-10/examples-1.json",
            "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui-bundle.min.js"]  # fmt: skip
    assert [rel for rel in gone if (tmp_path / rel).exists()] == []
    kept = ["jsonschema/validators.py", "botocore/data/dynamodb/2012-08-10/service-2.json.gz",
            "aws_lambda_powertools/event_handler/openapi/swagger_ui/html.py", "agent_wait/tests/keep.py",
            "agent_wait/types.pyi", "svc/tests/test_graph.py"]  # fmt: skip
    assert [rel for rel in kept if not (tmp_path / rel).exists()] == []
    assert set(dropped) == {rule.reason for rule in PRUNED}
    assert all(size > 0 for size in dropped.values())


def test_every_pruned_kind_says_why_nothing_reads_it() -> None:
    assert len({rule.pattern for rule in PRUNED}) == len(PRUNED)
    assert all(len(rule.reason) > 30 for rule in PRUNED), [rule.pattern for rule in PRUNED if len(rule.reason) <= 30]


def test_botocore_keeps_the_runtimes_services_and_those_the_code_names(tmp_path: Path) -> None:
    # GIVEN botocore's models for the runtime's services and three more, a graph that names one, and a
    # dependency that names another
    services = [*RUNTIME_AWS_SERVICES, "bedrock-runtime", "kendra", "rds", "textract"]
    _write(tmp_path, *(f"botocore/data/{name}/2020-01-01/service-2.json.gz" for name in services))
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "graph.py").write_text('import boto3\nllm = boto3.client("bedrock-runtime")\n')
    (tmp_path / "some_dependency").mkdir()
    (tmp_path / "some_dependency" / "search.py").write_text("SERVICE = 'kendra'\n")
    (tmp_path / "boto3").mkdir()
    (tmp_path / "boto3" / "docs.py").write_text("EXAMPLE = 'rds'  # boto3's own files do not count\n")

    # WHEN it is pruned, one more service asked for by name
    prune_bundle(tmp_path, keep=frozenset({"svc"}), aws_services=["textract"])

    # THEN only the models nothing names are gone
    left = sorted(path.name for path in (tmp_path / "botocore" / "data").iterdir())
    assert left == sorted([*RUNTIME_AWS_SERVICES, "bedrock-runtime", "kendra", "textract"])


def _lazy_copy(package: str, site: Path) -> Path:
    """A copy of the installed top-level package of `package` in `site`, `package` made lazy as the bundle makes it."""
    top = importlib.import_module(package.split(".", maxsplit=1)[0])
    installed = Path(str(top.__file__)).parent
    shutil.copytree(installed, site / installed.name, ignore=shutil.ignore_patterns("__pycache__"))
    assert lazy_package_init(site.joinpath(*package.split(".")), package)
    return site


def _in_subprocess(site: Path, code: str) -> object:
    result = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_dynamodb_saver_imports_no_other_saver_or_store(tmp_path: Path) -> None:
    site = _lazy_copy("langgraph_checkpoint_aws", tmp_path)
    loaded = _in_subprocess(
        site,
        "import json; from langgraph_checkpoint_aws import DynamoDBSaver; import langgraph_checkpoint_aws as p;"
        "assert p.__file__.startswith(sys.path[0]), p.__file__;"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('langgraph_checkpoint_aws'))))",
    )
    assert isinstance(loaded, list)
    others = [name for name in loaded if any(part in name for part in ("agentcore", "bedrock", ".store", "cache"))]
    assert others == [], others
    assert "langgraph_checkpoint_aws.checkpoint.dynamodb.saver" in loaded


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_exported_name_still_resolves_to_the_packages_own_object(package: str, tmp_path: Path) -> None:
    # The lazy __init__ gives each name of __all__ (langgraph-checkpoint-aws's Valkey fallbacks and
    # valkey_available included) the same object the package's own __init__ binds, which is kept beside it
    # and runs on the first other name; an unknown name is still an AttributeError.
    site = _lazy_copy(package, tmp_path)
    same = _in_subprocess(
        site,
        f"import json, importlib; lazy = importlib.import_module({package!r})\n"
        "assert lazy.__file__.startswith(sys.path[0]), lazy.__file__\n"
        f"own = importlib.import_module({package!r} + '._agent_wait_eager')\n"
        "same = {name: getattr(lazy, name) is getattr(own, name) for name in own.__all__}\n"
        "try:\n    lazy.NoSuchName\nexcept AttributeError as exc:\n    same[str(exc)] = True\n"
        "print(json.dumps(same))",
    )
    assert isinstance(same, dict)
    assert f"module {package!r} has no attribute 'NoSuchName'" in same
    assert all(same.values()), [name for name, ok in same.items() if not ok]
    assert len(same) > 10


def test_an_init_that_does_more_than_import_is_left_as_it_is(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    init = 'from pkg.a import A\nREGISTRY = {}\n__all__ = ["A"]\n'
    (package / "__init__.py").write_text(init)
    assert not lazy_package_init(package)
    assert (package / "__init__.py").read_text() == init
    assert not (package / "_agent_wait_eager.py").exists()
    assert not lazy_package_init(tmp_path / "absent")


def test_whether_bytecode_ships_is_part_of_the_asset_hash(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("graph = 1\n")
    bundle = LambdaBundle.for_architecture(lambda_.Architecture.X86_64, graph_source=[tmp_path / "agent.py"])
    compiled = dataclasses.replace(bundle, bytecode_python="/usr/bin/python3.13")
    assert dataclasses.replace(bundle, bytecode_python=None).asset_hash() != compiled.asset_hash()


def test_bytecode_compiles_for_the_given_python_or_fails_in_one_message(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("VALUE = 1\n")
    compile_bytecode(tmp_path, sys.executable)
    tag = sys.implementation.cache_tag
    assert (tmp_path / "pkg" / "__pycache__" / f"mod.{tag}.pyc").is_file()
    with pytest.raises(BundleError, match=r"compiling the bundle's bytecode failed: cannot run /no/python3\.13"):
        compile_bytecode(tmp_path, "/no/python3.13")
