"""The test process's one botocore loader (tests/support/shared_loader.py): shared, and not growing per session."""

from __future__ import annotations

import boto3


def test_two_sessions_share_one_loader_whose_search_paths_do_not_grow_per_session() -> None:
    # GIVEN two boto3 sessions made one after the other, each with a client
    first, second = boto3.Session(), boto3.Session()
    first.client("sqs")
    paths_after_one = list(first._loader.search_paths)  # pyright: ignore[reportAttributeAccessIssue]
    second.client("sqs")

    # THEN they read models through one loader, and boto3's data path is on it once
    assert first._loader is second._loader  # pyright: ignore[reportAttributeAccessIssue]
    assert list(second._loader.search_paths) == paths_after_one  # pyright: ignore[reportAttributeAccessIssue]
    assert len(set(paths_after_one)) == len(paths_after_one)
