"""The CDK libraries are installed consistently: `aws_cdk/cloud_assembly_schema/__init__.py` is aws-cdk-lib's copy.

aws-cdk-lib and its dependency aws-cdk.cloud-assembly-schema both ship that file, with different contents (the
first names its types `aws-cdk-lib.cloud_assembly_schema.*`, the second `@aws-cdk/cloud-assembly-schema.*`).
Which one an install keeps depends on the order the installer writes them: pip installs a dependency before
its dependent, so aws-cdk-lib's wins; uv installs in parallel, so either may. With the other copy, jsii cannot
read the `MetadataEntry` values aws-cdk-lib returns (`Annotations.find_warning`, ...). No pin avoids it: every
aws-cdk-lib from 2.178 on ships the file and depends on the package. `scripts/dev setup` reinstalls aws-cdk-lib
alone after `uv sync`, so its copy is written last; these tests catch an environment where it was not.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata

from aws_cdk import Annotations, Stack
from aws_cdk.assertions import Annotations as AnnotationsOf
from aws_cdk.assertions import Match
from tests.cdk.conftest import new_app

SHARED_FILE = "aws_cdk/cloud_assembly_schema/__init__.py"
FIX = "run scripts/dev setup, or: uv pip install --reinstall-package aws-cdk-lib --no-deps aws-cdk-lib==<its version>"


def _record_hash(distribution: str) -> tuple[str, str]:
    """(the hash `distribution`'s RECORD gives the shared file, the hash of the file installed there)."""
    (entry,) = [f for f in importlib.metadata.distribution(distribution).files or () if str(f) == SHARED_FILE]
    assert entry.hash is not None
    digest = hashlib.sha256(entry.locate().read_bytes()).digest()
    return entry.hash.value, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_the_installed_cloud_assembly_schema_module_is_aws_cdk_libs_copy() -> None:
    recorded, installed = _record_hash("aws-cdk-lib")
    other, _ = _record_hash("aws-cdk.cloud-assembly-schema")
    assert recorded != other, "the two packages' copies are the same now: this test and scripts/dev can go"
    assert installed == recorded, (
        f"{SHARED_FILE} is aws-cdk.cloud-assembly-schema's copy, not aws-cdk-lib's"
        + (" (" if installed == other else " (nor anyone's; ")
        + f"jsii then cannot read MetadataEntry results): {FIX}"
    )


def test_annotations_read_back_through_jsii() -> None:
    # GIVEN a warning on a construct
    stack = Stack(new_app(), "S")
    Annotations.of(stack).add_warning_v2("agent-wait:test", "read me back")
    # WHEN it is read back as cloud-assembly MetadataEntry structs / THEN jsii can build them
    found = AnnotationsOf.from_stack(stack).find_warning("*", Match.string_like_regexp("read me back"))
    assert len(found) == 1
    assert "read me back" in str(found[0].entry.data)
