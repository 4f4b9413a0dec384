"""The emulator's IAM policy evaluation (`agent_wait.local.iam_policy`): AWS's rules within one account."""

from __future__ import annotations

from typing import Any

import pytest

from agent_wait.local.iam_policy import PolicyDocument, Request, action_matches, evaluate, resource_matches

ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/Router"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/questions"
KEY = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd"


def policy(*statements: dict[str, Any], name: str = "RouterPolicy") -> PolicyDocument:
    return PolicyDocument.parse(name, {"Version": "2012-10-17", "Statement": list(statements)})


def allow(action: Any, resource: Any = "*", **more: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


def deny(action: Any, resource: Any = "*", **more: Any) -> dict[str, Any]:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **more}


def judge(*policies: PolicyDocument, request: Request, **options: Any) -> Any:
    return evaluate(policies, request, principal=ROLE, account=ACCOUNT, **options)


def test_an_allow_naming_the_action_and_resource_allows_the_request() -> None:
    # GIVEN a policy allowing UpdateItem on the table
    granted = policy(allow("dynamodb:UpdateItem", TABLE))
    # WHEN the role updates an item there
    verdict = judge(granted, request=Request("dynamodb:UpdateItem", TABLE))
    # THEN it is allowed
    assert verdict.allowed


def test_a_request_no_policy_allows_is_refused_naming_the_action() -> None:
    # GIVEN a policy allowing only GetItem
    granted = policy(allow("dynamodb:GetItem", TABLE))
    # WHEN the role updates an item
    verdict = judge(granted, request=Request("dynamodb:UpdateItem", TABLE))
    # THEN it is refused, in AWS's words, naming the action
    assert not verdict.allowed
    assert verdict.reason == "no identity-based policy allows the dynamodb:UpdateItem action"


def test_an_allow_on_another_resource_does_not_allow_this_one() -> None:
    granted = policy(allow("dynamodb:*", f"{TABLE}-other"))
    assert not judge(granted, request=Request("dynamodb:GetItem", TABLE)).allowed


def test_an_explicit_deny_wins_over_any_allow() -> None:
    # GIVEN one policy allowing everything and another denying deletes
    everything = policy(allow("*"))
    no_deletes = policy(deny("dynamodb:DeleteItem", TABLE), name="Guard")
    # WHEN the role deletes an item
    verdict = judge(everything, no_deletes, request=Request("dynamodb:DeleteItem", TABLE))
    # THEN the deny wins, and says where it was
    assert not verdict.allowed
    assert verdict.reason == "with an explicit deny in an identity-based policy"
    # AND what the deny does not name stays allowed
    assert judge(everything, no_deletes, request=Request("dynamodb:GetItem", TABLE)).allowed


@pytest.mark.parametrize(
    ("pattern", "action", "matches"),
    [
        ("dynamodb:GetItem", "dynamodb:GetItem", True),
        ("DynamoDB:getitem", "dynamodb:GetItem", True),  # actions compare without regard to case
        ("dynamodb:Get*", "dynamodb:GetItem", True),
        ("dynamodb:?etItem", "dynamodb:GetItem", True),
        ("dynamodb:*", "sqs:SendMessage", False),
        ("*", "sqs:SendMessage", True),
        ("dynamodb:Get", "dynamodb:GetItem", False),
    ],
)
def test_actions_match_by_wildcards_and_without_case(pattern: str, action: str, matches: bool) -> None:
    assert action_matches(pattern, action) is matches


@pytest.mark.parametrize(
    ("pattern", "arn", "matches"),
    [
        (TABLE, TABLE, True),
        (f"{TABLE}/index/*", f"{TABLE}/index/by_question", True),
        (f"{TABLE}/index/by_status", f"{TABLE}/index/by_question", False),
        (TABLE, f"{TABLE}/index/by_question", False),  # a table's grant is not its indexes'
        ("arn:aws:dynamodb:*:*:table/questions", TABLE, True),
        ("arn:aws:dynamodb:us-east-?:*:table/questions", TABLE, True),
        ("arn:aws:dynamodb:us-east-1:*:table/Questions", TABLE, False),  # resources compare with case
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-??????",
            f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:slack-AbC123",
            True,
        ),
        (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-??????",
            f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:slack-AbC1234",
            False,
        ),
        ("arn:aws:s3:::bucket/*", "arn:aws:s3:::bucket/a/b", True),
        ("arn:aws:s3:::bucket", "arn:aws:s3:::bucket/a", False),
        ("*", TABLE, True),
    ],
)
def test_resources_match_arn_by_arn_with_wildcards(pattern: str, arn: str, matches: bool) -> None:
    assert resource_matches(pattern, arn) is matches


def test_not_action_allows_every_action_but_those_it_names() -> None:
    # GIVEN an Allow of everything but deletes
    granted = policy({"Effect": "Allow", "NotAction": ["dynamodb:Delete*"], "Resource": TABLE})
    # THEN a read is allowed and a delete is not
    assert judge(granted, request=Request("dynamodb:GetItem", TABLE)).allowed
    assert not judge(granted, request=Request("dynamodb:DeleteItem", TABLE)).allowed


def test_not_resource_allows_every_resource_but_those_it_names() -> None:
    granted = policy({"Effect": "Allow", "Action": "dynamodb:GetItem", "NotResource": f"{TABLE}-secret"})
    assert judge(granted, request=Request("dynamodb:GetItem", TABLE)).allowed
    assert not judge(granted, request=Request("dynamodb:GetItem", f"{TABLE}-secret")).allowed


def test_an_allow_holds_only_while_its_conditions_hold() -> None:
    # GIVEN an Allow for Scheduler's role only when passed to Scheduler
    granted = policy(
        allow(
            "iam:PassRole",
            f"arn:aws:iam::{ACCOUNT}:role/Invoke",
            Condition={"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
        )
    )
    role = f"arn:aws:iam::{ACCOUNT}:role/Invoke"
    # THEN passing it to Scheduler is allowed, to anything else is not, and a request without the key is not
    assert judge(
        granted, request=Request("iam:PassRole", role, {"iam:passedtoservice": "scheduler.amazonaws.com"})
    ).allowed
    assert not judge(
        granted, request=Request("iam:PassRole", role, {"iam:passedtoservice": "ec2.amazonaws.com"})
    ).allowed
    assert not judge(granted, request=Request("iam:PassRole", role, {"iam:passedtoservice": None})).allowed


@pytest.mark.parametrize(
    ("operator", "expected", "actual", "holds"),
    [
        ("StringLike", "sqs.*.amazonaws.com", "sqs.us-east-1.amazonaws.com", True),
        ("StringLike", "sqs.*.amazonaws.com", "sns.us-east-1.amazonaws.com", False),
        ("StringNotEquals", "x", "y", True),
        ("StringNotEquals", "x", None, True),  # a negated operator holds when the key is absent
        ("StringEqualsIgnoreCase", "ABC", "abc", True),
        ("StringEqualsIfExists", "x", None, True),
        ("ArnLike", "arn:aws:sqs:*:*:queue", "arn:aws:sqs:us-east-1:1:queue", True),
        ("Bool", "true", "true", True),
        ("Null", "true", None, True),
        ("Null", "false", None, False),
    ],
)
def test_condition_operators_hold_as_aws_holds_them(
    operator: str, expected: str, actual: str | None, holds: bool
) -> None:
    granted = policy(allow("kms:Decrypt", KEY, Condition={operator: {"kms:ViaService": expected}}))
    verdict = judge(granted, request=Request("kms:Decrypt", KEY, {"kms:viaservice": actual}))
    assert verdict.allowed is holds


def test_an_allow_with_a_condition_it_cannot_judge_allows_nothing_and_says_why() -> None:
    # GIVEN an Allow with an operator the emulator does not evaluate
    granted = policy(
        allow("dynamodb:GetItem", TABLE, Sid="ByIp", Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
    )
    # WHEN the role reads
    verdict = judge(granted, request=Request("dynamodb:GetItem", TABLE))
    # THEN it is refused, and the statement skipped is named
    assert not verdict.allowed
    assert verdict.skipped == (
        "RouterPolicy statement ByIp: an Allow with the condition operator IpAddress, which the emulator cannot judge",
    )


def test_a_deny_with_a_condition_it_cannot_judge_is_taken_to_apply() -> None:
    granted = policy(
        allow("*"), deny("dynamodb:GetItem", TABLE, Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
    )
    assert not judge(granted, request=Request("dynamodb:GetItem", TABLE)).allowed


def test_a_resource_policy_naming_the_role_allows_without_an_identity_policy() -> None:
    # GIVEN a queue policy allowing the role to send
    queue = f"arn:aws:sqs:us-east-1:{ACCOUNT}:entry.fifo"
    queue_policy = policy(
        {"Effect": "Allow", "Principal": {"AWS": ROLE}, "Action": "sqs:SendMessage", "Resource": queue}
    )
    # THEN the role may send with no identity-based grant, and another principal's statement grants it nothing
    assert judge(request=Request("sqs:SendMessage", queue), resource_policy=queue_policy).allowed
    other = policy(
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/Other"}, "Action": "*", "Resource": "*"}
    )
    assert not judge(request=Request("sqs:SendMessage", queue), resource_policy=other).allowed


def test_a_deny_in_a_resource_policy_wins_over_the_roles_allow() -> None:
    queue = f"arn:aws:sqs:us-east-1:{ACCOUNT}:entry.fifo"
    queue_policy = policy(
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": queue,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    )
    granted = policy(allow("sqs:SendMessage", queue))
    # GIVEN the usual "TLS only" deny: over TLS it does not apply; without, it does
    assert judge(
        granted,
        request=Request("sqs:SendMessage", queue, {"aws:securetransport": "true"}),
        resource_policy=queue_policy,
    ).allowed
    refused = judge(
        granted,
        request=Request("sqs:SendMessage", queue, {"aws:securetransport": "false"}),
        resource_policy=queue_policy,
    )
    assert not refused.allowed
    assert refused.reason == "with an explicit deny in a resource-based policy"


def test_a_key_is_usable_only_when_its_key_policy_allows_the_role_or_trusts_the_account() -> None:
    grants_key = policy(allow("kms:Decrypt", KEY))
    trusts_account = policy(
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "kms:*", "Resource": "*"}
    )
    trusts_nobody = policy(
        {
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/Admin"},
            "Action": "kms:*",
            "Resource": "*",
        }
    )
    request = Request("kms:Decrypt", KEY)
    # GIVEN a key policy that trusts the account: the role's own grant decides
    assert judge(grants_key, request=request, resource_policy=trusts_account, key_policy=True).allowed
    assert not judge(request=request, resource_policy=trusts_account, key_policy=True).allowed
    # GIVEN a key policy that trusts neither: the role's grant is not enough
    refused = judge(grants_key, request=request, resource_policy=trusts_nobody, key_policy=True)
    assert not refused.allowed
    assert refused.reason == "the key policy does not allow the kms:Decrypt action"


def test_a_permissions_boundary_must_allow_the_request_too() -> None:
    granted = policy(allow("dynamodb:*", TABLE))
    reads_only = policy(allow("dynamodb:GetItem", TABLE), name="Boundary")
    assert judge(granted, request=Request("dynamodb:GetItem", TABLE), boundary=[reads_only]).allowed
    refused = judge(granted, request=Request("dynamodb:PutItem", TABLE), boundary=[reads_only])
    assert not refused.allowed
    assert refused.reason == "no permissions boundary allows the dynamodb:PutItem action"
