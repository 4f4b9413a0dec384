"""API Gateway's IAM authorizer, played locally: a request signed with SigV4 by a known local principal passes, with
the identity API Gateway would hand the function (`requestContext.authorizer.iam`); any other is refused.

The local principals are access keys the developer (or a test) names with their secrets (`LocalPrincipal`);
`agent-wait dev` names one, the emulator's own credentials (`local` / `local`), as `arn:aws:iam::<account>:user/
local-dev`. The check is SigV4's (botocore computes the signature again from the signed headers and the body, for
the service `execute-api`), and the request's `X-Amz-Date` must be within 15 minutes of now, as AWS requires.
Secrets and signatures are never logged.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = (
    "DEV_PRINCIPAL",
    "FORBIDDEN",
    "IAM_ROUTES",
    "MCP_SIGNED_IN_ROUTES",
    "LocalPrincipal",
    "SignatureRefusedError",
    "iam_identity",
    "iam_route",
)

MCP_SIGNED_IN_ROUTES: tuple[str, ...] = ("POST /mcp",)
"""The MCP server's route for people: behind the JWT authorizer (`agent_wait_cdk.mcp.MCP_SIGNED_IN_ROUTES`)."""
IAM_ROUTES: tuple[str, ...] = ("POST /mcp/iam",)
"""The routes behind the IAM authorizer: the MCP server's for machines (`agent_wait_cdk.mcp.MCP_IAM_ROUTES`)."""
FORBIDDEN = {"message": "Forbidden"}
"""API Gateway's body for a request its IAM authorizer refuses."""

SKEW = timedelta(minutes=15)
"""How far a request's `X-Amz-Date` may be from now."""
_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/\s]+)/(?P<date>\d{8})/(?P<region>[^/\s]+)/(?P<service>[^/\s]+)/"
    r"aws4_request,\s*SignedHeaders=(?P<headers>[a-z0-9;\-]+),\s*Signature=(?P<signature>[0-9a-f]{64})$"
)


class SignatureRefusedError(Exception):
    """A request API Gateway's IAM authorizer would refuse: unsigned, an unknown key, a stale date or a bad
    signature (`.reason` says which; never the secret)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class LocalPrincipal:
    """An access key the local IAM authorizer knows, and who signs with it."""

    access_key: str
    secret_key: str = ""
    arn: str = ""
    """The principal's ARN (`userArn`): an IAM user, or an assumed role with its session."""

    def __repr__(self) -> str:
        return f"LocalPrincipal(access_key={self.access_key!r}, arn={self.arn!r})"


DEV_PRINCIPAL = LocalPrincipal("local", "local", "arn:aws:iam::123456789012:user/local-dev")
"""`agent-wait dev`'s principal: the emulator's own credentials."""


def iam_route(method: str, path: str) -> str | None:
    """The IAM-authorized route (`IAM_ROUTES`) a request is for, or None."""
    route = f"{method} {path}"
    return route if route in IAM_ROUTES else None


def iam_identity(
    principals: Iterable[LocalPrincipal],
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The `requestContext.authorizer.iam` of a request signed by one of `principals`.

    Raises:
        SignatureRefusedError: not signed, signed with an unknown key or for another service, outside the time
            window, or a signature that does not match.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    found = _AUTHORIZATION.match((lowered.get("authorization") or "").strip())
    if found is None:
        raise SignatureRefusedError("the request is not signed with SigV4")
    known = {p.access_key: p for p in principals}
    principal = known.get(found["key"])
    if principal is None:
        raise SignatureRefusedError("the access key is not one this API knows")
    if found["service"] != "execute-api":
        raise SignatureRefusedError("the request is signed for another service than execute-api")
    stamp = lowered.get("x-amz-date") or ""
    try:
        signed_at = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError as exc:
        raise SignatureRefusedError("the request has no X-Amz-Date") from exc
    if abs((now or datetime.now(UTC)) - signed_at) > SKEW:
        raise SignatureRefusedError("the signature's date is more than 15 minutes from now")
    expected = _signature(principal, found, method=method, url=url, headers=lowered, body=body, stamp=stamp)
    if not hmac.compare_digest(expected, found["signature"]):
        raise SignatureRefusedError("the signature does not match the request")
    account = principal.arn.split(":")[4] if principal.arn.count(":") >= 5 else ""
    return {
        "accessKey": principal.access_key,
        "accountId": account,
        "callerId": principal.access_key,
        "cognitoIdentity": None,
        "principalOrgId": None,
        "userArn": principal.arn,
        "userId": principal.access_key,
    }


def _signature(
    principal: LocalPrincipal,
    found: re.Match[str],
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    stamp: str,
) -> str:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = found["headers"].split(";")
    request = AWSRequest(method=method, url=url, data=body, headers={name: headers.get(name, "") for name in signed})
    request.context["timestamp"] = stamp
    auth = SigV4Auth(Credentials(principal.access_key, principal.secret_key), found["service"], found["region"])
    canonical = auth.canonical_request(request)
    return str(auth.signature(auth.string_to_sign(request, canonical), request))
