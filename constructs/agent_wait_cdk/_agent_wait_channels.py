"""The answer channels `AgentWait` wires besides its announcers: Slack, Teams, a shaped webhook, email and web push.

`AgentWaitChannels` holds each channel's props and its record of what it sent (a `ChannelRecordTable`, created
unless brought), and says what the channels give the router and the sweep (their variables and grants), what
they add to the answer API (Slack's route and the app manifest with its URL) and their outputs. Every part is
created in the `AgentWait` it is given, under the ids it always had.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._names import ResourceNames
from agent_wait_cdk.answer_api import AnswerApi
from agent_wait_cdk.channel_records import ChannelRecordTable
from agent_wait_cdk.email import (
    EmailConfigurationSet,
    EmailProps,
    EmailSendsTable,
    email_environment,
    grant_email,
    identity_arn,
)
from agent_wait_cdk.push import PushProps, PushSendsTable, PushSubscriptionsTable, grant_push, push_environment
from agent_wait_cdk.slack import SlackMessagesTable, SlackProps, slack_app_manifest, slack_environment
from agent_wait_cdk.teams import (
    ShapedWebhookProps,
    TeamsProps,
    TeamsSendsTable,
    shaped_webhook_environment,
    teams_environment,
)

__all__ = ("AgentWaitChannels",)


class AgentWaitChannels:
    """The channels of one `AgentWait`: their props, their record tables and the email configuration set."""

    def __init__(
        self,
        scope: Construct,
        *,
        slack: SlackProps | None,
        teams: TeamsProps | None,
        shaped_webhook: ShapedWebhookProps | None,
        email: EmailProps | None,
        names: ResourceNames,
        push: PushProps | None = None,
        removal_policy: RemovalPolicy,
        encryption_key: kms.IKey | None,
    ) -> None:
        self._scope = scope
        self.slack, self.teams, self.shaped_webhook, self.email = slack, teams, shaped_webhook, email

        def record(kind: type[ChannelRecordTable], id: str, table_name: str | None) -> dynamodb.ITable:
            return kind(
                scope, id, table_name=table_name, removal_policy=removal_policy, encryption_key=encryption_key
            ).table

        self.teams_sends_table: dynamodb.ITable | None = None
        self.slack_messages_table: dynamodb.ITable | None = None
        self.email_sends_table: dynamodb.ITable | None = None
        self.email_configuration_set: EmailConfigurationSet | None = None
        # Teams, Slack, then email: the template lists resources in the order they are created.
        if teams is not None:
            self.teams_sends_table = record(TeamsSendsTable, "TeamsSendsTable", names.teams_sends_table)
        if slack is not None:
            self.slack_messages_table = slack.messages_table or record(
                SlackMessagesTable, "SlackMessagesTable", names.slack_messages_table
            )
        if email is not None:
            self.email_sends_table = email.sends_table or record(
                EmailSendsTable, "EmailSendsTable", names.email_sends_table
            )
            self.email_configuration_set = EmailConfigurationSet(
                scope,
                "EmailConfigurationSet",
                configuration_set_name=email.configuration_set_name or names.email_configuration_set,
            )
        self.push = push
        self.push_subscriptions_table: dynamodb.ITable | None = None
        self.push_sends_table: dynamodb.ITable | None = None
        if push is not None:
            self.push_subscriptions_table = PushSubscriptionsTable(
                scope,
                "PushSubscriptionsTable",
                table_name=names.push_subscriptions_table,
                removal_policy=removal_policy,
                encryption_key=encryption_key,
            ).table
            self.push_sends_table = record(PushSendsTable, "PushSendsTable", names.push_sends_table)
        self.slack_app_manifest: str | None = None
        """The Slack app's manifest as JSON, with the answer API's URL (a token until deploy); set with the API."""

    @property
    def read_questions(self) -> bool:
        """Slack, Teams and email find a question's row by its id alone (`ledger.find`, through `by_question`) to say
        who answered it."""
        return self.slack is not None or self.teams is not None or self.email is not None

    @property
    def sign_links(self) -> bool:
        """Email and Teams sign each recipient's own links, whichever announcers carry links in their envelopes."""
        return self.email is not None or self.teams is not None

    def environment(self) -> dict[str, str]:
        """The channels' variables of the router and the sweep."""
        environment: dict[str, str] = {}
        if self.slack is not None and self.slack_messages_table is not None:
            environment.update(slack_environment(self.slack, for_api=False))
            environment[shapes.ENV_SLACK_MESSAGES_TABLE] = self.slack_messages_table.table_name
        if self.teams is not None and self.teams_sends_table is not None:
            environment.update(teams_environment(self.teams, sends_table=self.teams_sends_table))
        if self.shaped_webhook is not None:
            environment.update(shaped_webhook_environment(self.shaped_webhook))
        if self.email is not None and self.email_sends_table and self.email_configuration_set:
            environment.update(
                email_environment(
                    self.email,
                    sends_table=self.email_sends_table,
                    configuration_set=self.email_configuration_set.configuration_set,
                )
            )
        if self.push is not None and self.push_subscriptions_table is not None:
            environment.update(
                push_environment(self.push, subscriptions=self.push_subscriptions_table, sends=self.push_sends_table)
            )
        return environment

    def grant(self, function: iam.IGrantable) -> None:
        """What the router or the sweep needs to post and send: each channel's secret, and its record table."""
        if self.slack is not None and self.slack_messages_table is not None:
            # The bot token posts and updates messages; the table remembers where each one is.
            _grants.grant_secret_value(function, self.slack.bot_token)
            _grants.grant_channel_record(function, self.slack_messages_table, _perms.SLACK_MESSAGES)
        if self.teams is not None and self.teams_sends_table is not None:
            _grants.grant_secret_value(function, self.teams.webhook_url)
            _grants.grant_channel_record(function, self.teams_sends_table, _perms.TEAMS_SENDS)
        if self.shaped_webhook is not None:
            _grants.grant_secret_value(function, self.shaped_webhook.url)
        if self.email is not None and self.email_sends_table and self.email_configuration_set:
            # Send as the identity with the configuration set, nothing else; the table records each send.
            grant_email(
                function,
                identity=identity_arn(self._scope, self.email),
                configuration_set_arn=self.email_configuration_set.configuration_set_arn,
                sends_table=self.email_sends_table,
            )
        if self.push is not None and self.push_subscriptions_table is not None:
            # The keys sign each push; every subscription is read to find who may answer; each push is claimed.
            grant_push(function, self.push, subscriptions=self.push_subscriptions_table, sends=self.push_sends_table)

    def add_to_answer_api(self, api: AnswerApi) -> None:
        """With Slack: its route on the answer API, and the Slack app's manifest with the API's URL. With push: the
        API's variables and grants to give the VAPID public key and keep subscriptions (its routes are signed-in)."""
        if self.push is not None and self.push_subscriptions_table is not None:
            for name, value in push_environment(
                self.push, subscriptions=self.push_subscriptions_table, sends=None
            ).items():
                api.function.add_environment(name, value)
            grant_push(api.function, self.push, subscriptions=self.push_subscriptions_table, sends=None)
        if self.slack is None:
            return
        api.add_slack(self.slack)
        manifest = slack_app_manifest(api.http_api.api_endpoint, name=self.slack.app_name)
        self.slack_app_manifest = Stack.of(self._scope).to_json_string(manifest)

    def outputs(self) -> dict[str, tuple[str, str]]:
        """The channels' outputs, by id: (value, description)."""
        values: dict[str, tuple[str, str]] = {}
        if self.slack_messages_table is not None:
            values["SlackMessagesTableName"] = (self.slack_messages_table.table_name, "Where each Slack message is")
        if self.email_sends_table is not None:
            values["EmailSendsTableName"] = (self.email_sends_table.table_name, "Where each question's emails are")
        if self.email_configuration_set is not None:
            values["EmailConfigurationSetName"] = (
                self.email_configuration_set.configuration_set_name,
                "The SES configuration set of every email (bounces and complaints counted)",
            )
        if self.push_subscriptions_table is not None:
            values["PushSubscriptionsTableName"] = (
                self.push_subscriptions_table.table_name,
                "The inbox's push subscriptions, one per person and device",
            )
        if self.slack_app_manifest is not None:
            values["SlackAppManifest"] = (
                self.slack_app_manifest,
                "The Slack app's manifest: paste it at api.slack.com/apps, Create New App, From a manifest",
            )
        return values
