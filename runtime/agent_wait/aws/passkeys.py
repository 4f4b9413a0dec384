"""The passkeys people registered (`PasskeyBook`), kept in the question table (`DynamoDbPasskeyBook`).

Each person's passkeys share one partition, `pk = PASSKEYS#<person key>`: one item per credential,
`sk = CREDENTIAL#<credential id>` (its COSE public key, its sign count), and while a registration is under way one
`sk = CHALLENGE` item (its challenge and when it expires; the table's TTL removes one left behind). A person's
passkeys are one consistent query; a sign count moves by one conditional update. Like the grants
(`agent_wait.aws._ledger_grants`), items are created by conditional updates, never puts (the answer API's role may
update the question table, not replace its items), and carry none of the indexes' key attributes, so no index holds
them.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from agent_wait.aws.items import from_item, to_attribute
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.schema import QUESTION_TABLE
from agent_wait.errors import LedgerUnavailableError
from agent_wait.ledger.passkeys import PasskeyBook, PasskeyCredential, RegistrationChallenge

__all__ = ("PASSKEYS_PREFIX", "DynamoDbPasskeyBook")

PASSKEYS_PREFIX = "PASSKEYS#"
"""The partition key of a person's passkeys is this and their person key."""
_CREDENTIAL = "CREDENTIAL#"
_CHALLENGE = "CHALLENGE"


class DynamoDbPasskeyBook(PasskeyBook):
    """Passkeys on the question table.

    Args:
        table_name: the question table.
        client: a boto3 DynamoDB client.
    """

    def __init__(self, table_name: str, *, client: Any) -> None:
        self.table_name = table_name
        self.client = client

    def add_credential(self, credential: PasskeyCredential) -> bool:
        return self._create(credential.person, _CREDENTIAL + credential.credential_id, credential.to_item())

    def credentials(self, person: str) -> list[PasskeyCredential]:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :credential)",
            "ExpressionAttributeValues": {":pk": {"S": PASSKEYS_PREFIX + person}, ":credential": {"S": _CREDENTIAL}},
            "ConsistentRead": True,
        }
        while True:
            page = self._call("query", **request)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        found = [PasskeyCredential.from_item(from_item(item)) for item in items]
        return sorted(found, key=lambda c: (c.registered_at, c.credential_id))

    def count_signature(self, person: str, credential_id: str, *, seen: int, now: int) -> bool:
        return self._update(
            self._key(person, _CREDENTIAL + credential_id),
            "SET sign_count = :now",
            "sign_count = :seen",
            {":now": {"N": str(now)}, ":seen": {"N": str(seen)}},
        )

    def put_challenge(self, person: str, challenge: RegistrationChallenge) -> None:
        expiry = int(parse_rfc3339(challenge.expires_at).timestamp())
        self._update(
            self._key(person, _CHALLENGE),
            "SET challenge = :c, expires = :e, #ttl = :ttl",
            None,
            {":c": {"S": challenge.challenge}, ":e": {"S": challenge.expires_at}, ":ttl": {"N": str(expiry)}},
            names={"#ttl": QUESTION_TABLE.ttl_attribute},
        )

    def take_challenge(self, person: str) -> RegistrationChallenge | None:
        # An update that empties the item (the answer API's role updates, never deletes); the TTL removes it.
        try:
            old = self._call(
                "update_item",
                TableName=self.table_name,
                Key=self._key(person, _CHALLENGE),
                UpdateExpression="REMOVE challenge, expires",
                ConditionExpression="attribute_exists(challenge)",
                ReturnValues="ALL_OLD",
            ).get("Attributes")
        except _ConditionFailedError:
            return None
        if not old:
            return None
        kept = from_item(old)
        return RegistrationChallenge(str(kept["challenge"]), str(kept["expires"]))

    def _key(self, person: str, sort: str) -> dict[str, Any]:
        return {"pk": {"S": PASSKEYS_PREFIX + person}, "sk": {"S": sort}}

    def _create(self, person: str, sort: str, attributes: dict[str, Any]) -> bool:
        names = {f"#a{i}": name for i, name in enumerate(attributes)}
        values = {f":a{i}": to_attribute(value) for i, value in enumerate(attributes.values())}
        expression = "SET " + ", ".join(f"{alias} = :a{alias[2:]}" for alias in names)
        return self._update(self._key(person, sort), expression, "attribute_not_exists(pk)", values, names=names)

    def _update(
        self,
        key: dict[str, Any],
        expression: str,
        condition: str | None,
        values: dict[str, Any],
        *,
        names: dict[str, str] | None = None,
    ) -> bool:
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": key,
            "UpdateExpression": expression,
            "ExpressionAttributeValues": values,
        }
        if condition is not None:
            request["ConditionExpression"] = condition
        if names:
            request["ExpressionAttributeNames"] = names
        try:
            self._call("update_item", **request)
        except _ConditionFailedError:
            return False
        return True

    def _call(self, operation: str, **request: Any) -> dict[str, Any]:
        """One DynamoDB call; a failed condition raises `_ConditionFailedError`, any other `LedgerUnavailableError`."""
        try:
            return getattr(self.client, operation)(**request)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code"))
            if code == "ConditionalCheckFailedException":
                raise _ConditionFailedError from None
            message = f"passkeys: DynamoDB {operation} on {self.table_name} failed with {code}"
            raise LedgerUnavailableError(message, table=self.table_name, code=code) from exc


class _ConditionFailedError(Exception):
    """A conditional write found the item otherwise (a credential registered already, a sign count moved)."""
