"""Dropping what the functions never read from an installed bundle.

Compiled libraries ship without their debug sections: each `*.so` is passed through `strip --strip-debug`
when binutils' `strip` is on PATH (a library it cannot read, one built for another architecture, is left as
it is). Some wheels ship with their debug sections (zstandard's for Python 3.11: 11.6 MB, 1.0 MB stripped);
the Lambda wheels of today's pins come stripped already, and the refund bundle is 58.9 MB unzipped either way.

Then what the functions never read is dropped (`prune_bundle`), each kind for a reason written beside it in
`PRUNED`: test suites, type stubs, C sources, botocore's request examples, Swagger UI's assets, and the botocore
service models of services nothing in the bundle names. A model is kept for every service in
`RUNTIME_AWS_SERVICES` (what agent-wait's handlers call), for every service named in a string literal of any
Python file in the bundle (the graph source and its dependencies included: `boto3.client("bedrock-runtime")`
in a graph, or in a package such as langchain-aws, keeps `bedrock-runtime`), and for each of the bundle's
`aws_services`. A graph that computes a service's name at run time (`boto3.client(name)`) names it in
`aws_services`, or anywhere in its source as a literal; otherwise its client fails with botocore's
`UnknownServiceError`. The refund bundle: 58.9 MB before, 42.4 MB after (13.6 MB of it botocore models).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ("PRUNED", "RUNTIME_AWS_SERVICES", "Pruned", "prune_bundle", "strip_debug_sections", "tree_size")

RUNTIME_AWS_SERVICES = frozenset({"dynamodb", "events", "lambda", "s3", "secretsmanager", "sns", "sqs", "sts"})
"""The botocore service models every bundle keeps: the services agent-wait's router, sweep and answer API make
clients for (ledger and checkpoints, EventBridge and SNS announcers, webhook and link-key secrets, checkpoint
offload, the queues, Lambda for durable functions' callbacks), and STS, which botocore's assume-role and
web-identity credential providers call."""


@dataclass(frozen=True)
class Pruned:
    """One kind of file the bundle drops, and why no function reads it.

    Attributes:
        pattern: a glob relative to the bundle's root, matched against each path (`fnmatch`, where `*` also
            crosses `/`); a matching directory goes whole.
        reason: why nothing in Lambda reads it.
    """

    pattern: str
    reason: str


PRUNED: tuple[Pruned, ...] = (
    Pruned("*/tests", "test suites shipped inside wheels (jsonschema, referencing, certifi): pytest runs them, "
           "nothing imports them"),
    Pruned("*.pyi", "type stubs: read by type checkers, never by the interpreter"),
    Pruned("*-stubs", "stub-only packages (wrapt-stubs, jsonpatch-stubs): type checkers' input, never imported"),
    Pruned("*.c", "C sources shipped beside their compiled module (wrapt, websockets): the .so is what loads"),
    Pruned("botocore/data/*/*/examples-1.json", "request examples for botocore's generated documentation "
           "(botocore.docs); clients never read them"),
    Pruned("aws_lambda_powertools/event_handler/openapi/swagger_ui/*.min.*", "Swagger UI's script and style, "
           "served only by enable_swagger(), which agent-wait's answer API never calls"),
)  # fmt: skip
"""What `prune_bundle` drops from the installed dependencies (never from the runtime or the graph source), besides
the botocore models of services nothing names (see the module docstring)."""

_SERVICE_NAME = re.compile(r"""["']([a-z0-9][a-z0-9-]*)["']""")
"""A quoted lower-case word: the form a botocore service name takes in `boto3.client("...")`."""


def strip_debug_sections(bundle_dir: Path) -> int:
    """Remove debug sections from every compiled library under `bundle_dir`; returns the bytes saved.

    Only `--strip-debug`: symbols a library exports or needs stay, so every import works as before. Without
    `strip` on PATH nothing changes; a library `strip` cannot read is left as it is.
    """
    strip = shutil.which("strip")
    if strip is None:
        return 0
    saved = 0
    for library in sorted(bundle_dir.rglob("*.so*")):
        if not library.is_file() or library.is_symlink():
            continue
        # Into a new file, then renamed over: the installer may have hard-linked the library from its cache,
        # and that same file is loaded by other environments right now; writing it in place would change
        # (and can crash) every one of them.
        stripped = library.with_name(library.name + ".stripped")
        result = subprocess.run(
            [strip, "--strip-debug", "--preserve-dates", "-o", str(stripped), str(library)],
            capture_output=True,
            check=False,
        )
        if result.returncode == 0 and stripped.stat().st_size < library.stat().st_size:
            saved += library.stat().st_size - stripped.stat().st_size
            stripped.chmod(library.stat().st_mode)
            os.replace(stripped, library)
        else:
            stripped.unlink(missing_ok=True)
    return saved


def prune_bundle(
    bundle_dir: Path, *, keep: frozenset[str] = frozenset(), aws_services: Sequence[str] = ()
) -> dict[str, int]:
    """Drop what no function reads from an installed bundle; returns the bytes dropped, by reason.

    Every `PRUNED` pattern, then each `botocore/data/<service>` whose service is not kept: a service is kept
    when it is in `RUNTIME_AWS_SERVICES` or `aws_services`, or named in a string literal of any Python file in
    the bundle outside botocore and boto3 themselves (the top-level entries in `keep` included). Nothing under
    a top-level entry named in `keep` (the runtime and the graph source) is dropped.
    """
    dropped: dict[str, int] = {}

    def drop(path: Path, reason: str) -> None:
        dropped[reason] = dropped.get(reason, 0) + _remove(path)

    models = bundle_dir / "botocore" / "data"
    if models.is_dir():  # first, so that the walk below need not visit them
        kept = set(RUNTIME_AWS_SERVICES) | set(aws_services) | _named_services(bundle_dir, models)
        for service in sorted(models.iterdir()):
            if service.is_dir() and service.name not in kept:
                drop(service, "botocore models of AWS services nothing in the bundle names")
    rules = [(re.compile(fnmatch.translate(rule.pattern)), rule.reason) for rule in PRUNED]
    for root, dirs, files in os.walk(bundle_dir):
        here = Path(root)
        rel = here.relative_to(bundle_dir).as_posix()
        prefix = "" if rel == "." else rel + "/"
        if not prefix:  # the runtime and the graph source are never pruned
            dirs[:] = [name for name in dirs if name not in keep]
        for names, is_dir in ((dirs, True), ([name for name in files if prefix or name not in keep], False)):
            for name in list(names):
                reason = next((reason for pattern, reason in rules if pattern.match(prefix + name)), None)
                if reason is not None and not (here / name).is_symlink():
                    drop(here / name, reason)
                    if is_dir:
                        dirs.remove(name)
    return dropped


def _named_services(bundle_dir: Path, models: Path) -> set[str]:
    """The botocore services named in a string literal of any Python file outside botocore and boto3."""
    services = {entry.name for entry in models.iterdir() if entry.is_dir()}
    named: set[str] = set()
    for file in bundle_dir.rglob("*.py"):
        if file.relative_to(bundle_dir).parts[0] in ("botocore", "boto3"):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        named.update(word for word in _SERVICE_NAME.findall(text) if word in services)
    return named


def _remove(path: Path) -> int:
    """Delete a file or a directory tree; returns the bytes it held."""
    size = tree_size(path)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    return size


def tree_size(path: Path) -> int:
    """The bytes a file, or every file under a directory, holds."""
    if path.is_file():
        return path.stat().st_size
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())
