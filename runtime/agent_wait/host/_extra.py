"""Fail early, naming the extra, when the host's dependencies are not installed."""

from agent_wait.errors import require_extra

for _package in ("boto3", "aws_lambda_powertools", "langgraph", "langgraph_checkpoint_aws"):
    require_extra("agent_wait.host", _package, "host")
