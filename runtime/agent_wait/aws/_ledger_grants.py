"""`DynamoDbLedger`'s standing grants (`GrantLedger`), kept in the question table.

Every grant is one item in one partition, `pk = GRANTS`, `sk = <function>~<question id>` (`grant_id_for`): a
function's live grants are one consistent query on a key prefix (so a revoke holds for the very next ask), a grant
is read by its id alone, and the grants list is a query of the partition. A grant is made by one conditional
update that creates it (the answer API's role updates the table, never puts). The item carries none of the indexes'
key attributes, so no index holds it. Each use is one conditional update: not revoked, not expired, a use left and
this question not yet among those it decided; a failed condition returns the item, so a question that already took
its use gets the grant back. One partition takes about 1,000 writes a second, far above the rate anyone asks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.aws._ledger_table import PK, SK, LedgerTable
from agent_wait.aws.items import from_item, to_attribute
from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.schema import QUESTION_TABLE
from agent_wait.ledger.grants import GRANT_ID_SEPARATOR, Grant, GrantLedger

__all__ = ("GRANTS_PARTITION", "GrantWrites")

GRANTS_PARTITION = "GRANTS"
"""The partition key value every grant item shares."""


class GrantWrites(LedgerTable, GrantLedger):
    """Standing grants on the question table."""

    def add_grant(self, grant: Grant) -> Grant:
        attributes = _to_item(grant)
        if self._closed_ttl is not None:  # kept for the audit as long as the rows of the questions it decided
            expiry = parse_rfc3339(grant.expires_at) + self._closed_ttl
            attributes[QUESTION_TABLE.ttl_attribute] = {"N": str(int(expiry.timestamp()))}
        # An update that creates the item, not a put: the answer API makes grants, and its role may update the
        # question table but never put (replace) an item in it. The same one write, the same write units.
        names = {f"#a{i}": name for i, name in enumerate(attributes)}
        done, old = self._conditional(
            "update_item",
            Key=self._grant_key(grant.grant_id),
            UpdateExpression="SET " + ", ".join(f"{alias} = :a{alias[2:]}" for alias in names),
            ConditionExpression=f"attribute_not_exists({PK})",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={f":a{i}": value for i, value in enumerate(attributes.values())},
        )
        return grant if done or old is None else _from_item(old)

    def live_grants(self, function: str, *, now: datetime) -> list[Grant]:
        found = self._query(
            KeyConditionExpression=f"{PK} = :pk AND begins_with({SK}, :function)",
            ExpressionAttributeValues={
                ":pk": {"S": GRANTS_PARTITION},
                ":function": {"S": f"{function}{GRANT_ID_SEPARATOR}"},
            },
            ConsistentRead=True,
        )
        live = [grant for grant in map(_from_item, found) if grant.live(now)]
        return sorted(live, key=lambda g: (g.granted_at, g.grant_id))

    def use_grant(self, grant_id: str, question_id: str, *, now: datetime) -> Grant | None:
        done, item = self._conditional(
            "update_item",
            Key=self._grant_key(grant_id),
            UpdateExpression="SET decided = list_append(decided, :question) ADD used :one",
            ConditionExpression=(
                f"attribute_exists({PK}) AND attribute_not_exists(revoked_at) AND grant_expires_at > :now "
                "AND (attribute_not_exists(uses) OR used < uses) AND NOT contains(decided, :id)"
            ),
            ExpressionAttributeValues={
                ":question": {"L": [{"S": question_id}]},
                ":id": {"S": question_id},
                ":one": {"N": "1"},
                ":now": {"S": format_rfc3339(now)},
            },
            ReturnValues="ALL_NEW",
        )
        if done:
            return _from_item(item) if item else None
        kept = _from_item(item) if item else None
        return kept if kept is not None and question_id in kept.decided else None

    def revoke_grant(self, grant_id: str, *, by: str, now: datetime) -> Grant | None:
        # A failed condition returns the item as it is: unknown (None), or revoked before (the first revoke kept).
        _, item = self._conditional(
            "update_item",
            Key=self._grant_key(grant_id),
            UpdateExpression="SET revoked_at = :at, revoked_by = :by",
            ConditionExpression=f"attribute_exists({PK}) AND attribute_not_exists(revoked_at)",
            ExpressionAttributeValues={":at": {"S": format_rfc3339(now)}, ":by": {"S": by}},
            ReturnValues="ALL_NEW",
        )
        return _from_item(item) if item else None

    def grant(self, grant_id: str) -> Grant | None:
        item = self._call("get_item", Key=self._grant_key(grant_id), ConsistentRead=True).get("Item")
        return _from_item(from_item(item)) if item else None

    def grants(self, *, now: datetime, live_only: bool = False, limit: int = 100) -> list[Grant]:
        found = map(
            _from_item,
            self._query(
                KeyConditionExpression=f"{PK} = :pk",
                ExpressionAttributeValues={":pk": {"S": GRANTS_PARTITION}},
                ConsistentRead=True,
            ),
        )
        chosen = [grant for grant in found if grant.live(now)] if live_only else list(found)
        return sorted(chosen, key=lambda g: (g.granted_at, g.grant_id), reverse=True)[:limit]

    def _grant_key(self, grant_id: str) -> dict[str, Any]:
        return {PK: {"S": GRANTS_PARTITION}, SK: {"S": grant_id}}


_BODY = ("terms", "granted_by", "via", "granted_at", "subject", "groups", "granters")
"""What of a grant rides in one map attribute: what no condition reads."""


def _to_item(grant: Grant) -> dict[str, Any]:
    """The grant's attributes. The use count (`used`, against `uses`) and the questions it decided are top-level, for
    the conditions; names that an index keys on (`question_id`, `expires_at`, `status`) are never used."""
    body = grant.to_item()
    attributes: dict[str, Any] = {
        "body": to_attribute({key: body[key] for key in _BODY}),
        "granted_on": {"S": grant.question_id},
        "grant_expires_at": {"S": grant.expires_at},
        "used": {"N": str(len(grant.decided))},
        "decided": {"L": [{"S": question} for question in grant.decided]},
    }
    if grant.uses_left is not None:
        attributes["uses"] = {"N": str(grant.uses_left + len(grant.decided))}
    return attributes


def _from_item(item: dict[str, Any]) -> Grant:
    body = item["body"]
    uses, used = item.get("uses"), int(item.get("used") or 0)
    return Grant.from_item(
        {
            **body,
            "grant_id": item[SK],
            "question_id": item["granted_on"],
            "expires_at": item["grant_expires_at"],
            "uses_left": None if uses is None else int(uses) - used,
            "decided": item.get("decided") or [],
            "revoked_at": item.get("revoked_at"),
            "revoked_by": item.get("revoked_by"),
        }
    )
