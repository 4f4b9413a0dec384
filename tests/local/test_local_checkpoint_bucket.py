"""The local stack deploys the refund template's checkpoint bucket into moto's CloudFormation, and the router's
`AGENT_WAIT_CHECKPOINT_BUCKET` names it, so the local router offloads large checkpoints as the deployed one does."""

from __future__ import annotations

from typing import Any


def test_the_checkpoint_bucket_is_deployed_locally_and_the_router_names_it(world: Any) -> None:
    import boto3

    from agent_wait.host import checkpoint_saver

    local = world.local
    bucket = local.environment["AGENT_WAIT_CHECKPOINT_BUCKET"]
    s3 = local.client("s3")
    s3.head_bucket(Bucket=bucket)
    encryption = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert encryption[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    # What the router builds from that environment offloads to it, through the emulator
    session = boto3.Session(region_name="us-east-1")  # the local stack set AWS_ENDPOINT_URL to the emulator
    saver = checkpoint_saver(local.environment["AGENT_WAIT_CHECKPOINT_TABLE"], session, bucket=bucket)
    assert saver.offloads
    assert saver.storage.s3_bucket == bucket
    assert saver.storage.s3_client.meta.endpoint_url == local.endpoint_url
