"""One botocore data loader for every session a test process makes.

A Lambda process builds its clients once; the tests build a router, a sweep or an API thousands of times in one
process (a cold start per crash, per door, per scenario), and each `boto3.Session()` gets a new loader that parses
the service models, endpoint rules and partitions from JSON again: about 60 ms of CPU per client, a fifth of the
engine tests' time. The models are read-only data, so one loader, and its cache, can serve every session.
"""

from __future__ import annotations

from typing import Any

import botocore.loaders
import botocore.session

__all__ = ("share_one_loader",)


class _Paths(list[str]):
    """The shared loader's search paths. boto3 appends its own data path to the loader of every session it makes;
    on a shared loader that would add one entry per session, and each lookup would walk them all."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


def share_one_loader() -> None:
    """Make every botocore session of this process use one loader per data path (idempotent)."""
    if getattr(botocore.session.create_loader, "_shared", False):
        return
    made: dict[str | None, Any] = {}
    create = botocore.loaders.create_loader

    def create_loader(search_path_string: str | None = None) -> Any:
        loader = made.get(search_path_string)
        if loader is None:
            loader = create(search_path_string)
            loader._search_paths = _Paths(loader.search_paths)
            made[search_path_string] = loader
        return loader

    create_loader._shared = True  # type: ignore[attr-defined]
    botocore.session.create_loader = create_loader  # type: ignore[assignment]
