"""The answer API's HTTP side: its default stage, throttled, whose access log never records a token, and CORS for
the web pages that call it from a browser.
"""

from __future__ import annotations

from collections.abc import Sequence

import jsii
from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_logs as logs
from constructs import Construct

__all__ = ("ACCESS_LOG_FORMAT", "cors_preflight", "default_stage")

ACCESS_LOG_FORMAT = (
    '{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","requestTime":"$context.requestTime",'
    '"routeKey":"$context.routeKey","path":"$context.path","status":"$context.status",'
    '"protocol":"$context.protocol","responseLength":"$context.responseLength",'
    '"latency":"$context.responseLatency","integrationStatus":"$context.integrationStatus",'
    '"integrationError":"$context.integrationErrorMessage","authorizerError":"$context.authorizer.error"}'
)
"""One JSON line per request. Never the query string, a header or the body: a link's token is never logged."""

_CORS_HEADERS = ("authorization", "content-type", "idempotency-key")


def default_stage(
    scope: Construct,
    http_api: apigwv2.HttpApi,
    *,
    rate_limit: float,
    burst_limit: int,
    log_retention: logs.RetentionDays,
    removal_policy: RemovalPolicy,
) -> tuple[apigwv2.HttpStage, logs.LogGroup]:
    """The `$default` stage, deployed on every change and throttled for the whole API, and the log group its access
    log (`ACCESS_LOG_FORMAT`) goes to."""
    access_log_group = logs.LogGroup(scope, "AccessLogs", retention=log_retention, removal_policy=removal_policy)
    stage = apigwv2.HttpStage(
        scope,
        "DefaultStage",
        http_api=http_api,
        stage_name="$default",
        auto_deploy=True,
        throttle=apigwv2.ThrottleSettings(rate_limit=rate_limit, burst_limit=burst_limit),
        access_log_settings=_AccessLogSettings(
            apigwv2.LogGroupLogDestination(access_log_group),  # pyright: ignore[reportArgumentType]
            apigw.AccessLogFormat.custom(ACCESS_LOG_FORMAT),
        ),
    )
    return stage, access_log_group


def cors_preflight(origins: Sequence[str]) -> apigwv2.CorsPreflightOptions | None:
    """CORS for pages at `origins` that call the API from a browser (GET and POST, the token in a header); none: off,
    since the API's own pages are same-origin."""
    if not origins:
        return None
    return apigwv2.CorsPreflightOptions(
        allow_origins=list(origins),
        allow_methods=[apigwv2.CorsHttpMethod.GET, apigwv2.CorsHttpMethod.POST],
        allow_headers=list(_CORS_HEADERS),
        max_age=Duration.hours(1),
    )


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogSettings:
    """`apigwv2.IAccessLogSettings` is an interface, not a struct: Python needs a class to pass one."""

    def __init__(self, destination: apigwv2.IAccessLogDestination, log_format: apigw.AccessLogFormat) -> None:
        self._destination = destination
        self._format = log_format

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw.AccessLogFormat:
        return self._format
