"""Faster cold starts: lazy package inits, and Python 3.13 bytecode.

Packages whose `__init__` imports every module they have are made lazy (`LAZY_PACKAGES`): the router imports
`DynamoDBSaver` from langgraph-checkpoint-aws, whose `__init__` also imports its AgentCore, Bedrock session and
store modules (and Powertools' `data_classes` imports some forty event classes for the batch processor's one).
In the bundle, such an `__init__` is kept as `_agent_wait_eager.py` and a generated one imports each name on
first use (PEP 562), so the saver comes without the rest; every other name (and the Valkey fallbacks) still
resolves, through the package's own code. Importing `langgraph_checkpoint_aws.checkpoint.dynamodb` directly
would not help: a package's `__init__` always runs before its submodules.

Python 3.13 bytecode ships when this machine has a Python 3.13 (`python3.13` on PATH, or pyenv's): every module
is compiled with `compileall --invalidation-mode unchecked-hash` (a Lambda's /var/task is read-only, so without
it each cold start compiles every module it imports: the refund router was ready in 1.2 s with bytecode, 3.0 s
without). The refund bundle is then 67 MB unzipped. Without a Python 3.13 (`uv python install` downloads it
from GitHub), no bytecode ships and the bundle still works, only its cold start is slower; whether bytecode
ships is part of the asset hash.
"""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
from pathlib import Path

from agent_wait_cdk.bundling.errors import BundleError
from agent_wait_cdk.bundling.install import LAMBDA_PYTHON_VERSION

__all__ = ("LAZY_PACKAGES", "compile_bytecode", "find_lambda_python", "lazy_package_init")

LAZY_PACKAGES = ("langgraph_checkpoint_aws", "aws_lambda_powertools.utilities.data_classes")
"""Packages whose `__init__` the bundle makes lazy (`lazy_package_init`), each because it imports every module it
has to export their names while the functions use one or two: langgraph-checkpoint-aws's imports its AgentCore,
Bedrock session and store modules (and tries Valkey's), and the router needs only `DynamoDBSaver`; Powertools'
`data_classes` imports a class for each of some forty event sources, and the batch processor needs SQS's."""

_EAGER_INIT = "_agent_wait_eager"
"""The name a lazy package's own `__init__` is kept under in the bundle."""


def lazy_package_init(package_dir: Path, package: str | None = None) -> bool:
    """Make a package's `__init__` import each name on first use; True when it was rewritten.

    `package` is its dotted name (default: the folder's name), against which relative imports resolve.

    The `__init__` is kept as `_agent_wait_eager.py` in the same package, and a generated one maps each name
    the original imports unconditionally at top level (`from module import Name`) to its module, imported when
    the name is first read (PEP 562 `__getattr__`). Any other name (one bound in a `try`, a submodule) is read
    from the kept `__init__`, which then runs as it was written. An `__init__` that does anything but import,
    bind `__all__` and try imports is left as it is (False), as is a package that is not there.
    """
    init = package_dir / "__init__.py"
    if not init.is_file() or (package_dir / f"{_EAGER_INIT}.py").exists():
        return False
    tree = ast.parse(init.read_text(encoding="utf-8"))
    name = package or package_dir.name
    lazy: dict[str, tuple[str, str]] = {}
    exported: list[str] | None = None
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module and all(alias.name != "*" for alias in node.names):
            module = node.module if node.level == 0 else _absolute(name, node.module, node.level)
            for alias in node.names:
                lazy[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(node, ast.Try) and all(_catches_import_error(handler) for handler in node.handlers):
            continue  # its names are read from the kept __init__ when asked for
        elif isinstance(node, ast.Assign) and [_target_name(target) for target in node.targets] == ["__all__"]:
            try:
                exported = [str(name) for name in ast.literal_eval(node.value)]
            except ValueError:
                return False
        else:
            return False
    if exported is None:
        return False
    docstring = (ast.get_docstring(tree) or package_dir.name).replace('"""', "'''")
    # A name its own submodule shares (`from .event_source import event_source`) is bound now: imported later,
    # that submodule would set the package's attribute to itself, and no __getattr__ would run for the name.
    now = {alias: target for alias, target in lazy.items() if target[0] == f"{name}.{alias}"}
    eager = "".join(f"from {module} import {attr} as {alias}\n" for alias, (module, attr) in sorted(now.items()))
    lazy = {alias: target for alias, target in lazy.items() if alias not in now}
    init.rename(package_dir / f"{_EAGER_INIT}.py")
    text = _LAZY_INIT.format(docstring=docstring, exported=exported, eager=eager, lazy=lazy)
    init.write_text(text, encoding="utf-8")
    return True


_LAZY_INIT = '''"""{docstring}

(Rewritten by agent-wait's Lambda bundler: each name is imported when first read. This package's own
`__init__` is `_agent_wait_eager.py`; a name not mapped below is read from it, so it runs as written.)
"""

import importlib as _importlib
from typing import Any as _Any

__all__ = {exported!r}
{eager}_LAZY = {lazy!r}


def __getattr__(name: str) -> _Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(_importlib.import_module(target[0]), target[1])
    else:
        eager = _importlib.import_module(__name__ + "._agent_wait_eager")
        if name in globals():  # a submodule the kept __init__ imported
            return globals()[name]
        if not hasattr(eager, name):
            raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
        value = getattr(eager, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
'''
"""The generated `__init__` of a lazy package (`str.format` fields: docstring, exported, eager, lazy)."""


def _absolute(package: str, module: str, level: int) -> str:
    """`from .module import x` (level 1) in `package`'s `__init__` is `package.module`."""
    parts = package.split(".")
    return ".".join([*parts[: len(parts) - level + 1], module])


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError")


def _target_name(target: ast.expr) -> str | None:
    return target.id if isinstance(target, ast.Name) else None


@functools.cache
def find_lambda_python() -> str | None:
    """A Python 3.13 (the Lambda runtime's version) on this machine: `python3.13` on PATH, else pyenv's; or None.

    Looked for once per process (every `AgentWait` plans a bundle)."""
    name = f"python{LAMBDA_PYTHON_VERSION}"
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{LAMBDA_PYTHON_VERSION}.*/bin/{name}"), reverse=True)
    for candidate in filter(None, [shutil.which(name), *map(str, pyenv)]):
        try:
            probe = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.startswith(f"Python {LAMBDA_PYTHON_VERSION}."):
            return candidate
    return None


def compile_bytecode(bundle_dir: Path, python: str) -> None:
    """Compile every module in the bundle with `python` (3.13), as `unchecked-hash` pycs; raises `BundleError`.

    Unchecked: Lambda loads them without reading the source's timestamp or hash (the zip's timestamps are not
    the build's); the bundle is rebuilt, never edited, whenever a source changes.
    """
    command = [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(bundle_dir)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BundleError(f"compiling the bundle's bytecode failed: cannot run {python} ({exc.strerror})") from None
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
        raise BundleError(
            f"compiling the bundle's bytecode failed (exit {result.returncode}): {' '.join(command)}\n{tail}"
        )
