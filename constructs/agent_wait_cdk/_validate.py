"""Prop checks made at construction: every problem is collected, then one error names them all.

Each message gives the field, the limit, the unit and the value passed in (as `aws-sqs`'s
`validate-props.ts` does). Values that are unresolved tokens are skipped: they are only known at deploy
time, and CloudFormation checks them then.
"""

from __future__ import annotations

from aws_cdk import Duration, Token

__all__ = ("AgentWaitPropsError", "PropChecks")


class AgentWaitPropsError(ValueError):
    """Raised at synth time when a construct's props are out of range or contradict each other.

    Attributes:
        construct: the construct path, e.g. `RefundAgentStack/AgentWait`.
        problems: one line per problem, in the order the props were checked.
    """

    def __init__(self, construct: str, problems: list[str]) -> None:
        self.construct = construct
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"{construct}: {len(problems)} invalid prop(s):\n{lines}")


class PropChecks:
    """Collects prop problems for one construct; `raise_if_any()` raises them together."""

    def __init__(self, construct: str, *, prefix: str = "", problems: list[str] | None = None) -> None:
        self.construct = construct
        self.prefix = prefix
        self.problems: list[str] = [] if problems is None else problems

    def prefixed(self, prefix: str) -> PropChecks:
        """A view that records into the same list with field names prefixed (`timeout` -> `router.timeout`).

        A composing construct checks its parts' props with their own rules before creating anything, so
        one error lists every problem, in the caller's field names.
        """
        return PropChecks(self.construct, prefix=self.prefix + prefix, problems=self.problems)

    def name(self, field: str) -> str:
        """`field` as the caller knows it (`reserved_concurrent_executions` -> `router.reserved_concurrent_executions`),
        for a message that names a second prop."""
        return self.prefix + field

    def fail(self, field: str, message: str) -> None:
        """Record a problem no range check covers: `<field> <message>`, e.g. two props that cannot go together."""
        self.problems.append(f"{self.prefix}{field} {message}")

    def int_between(self, field: str, value: int | float | None, *, minimum: int, maximum: int, unit: str) -> None:
        """`value` must lie in [minimum, maximum] `unit`s; None and tokens are skipped."""
        if value is None or Token.is_unresolved(value):
            return
        if not minimum <= value <= maximum:
            limits = f"between {_num(minimum)} and {_num(maximum)} {unit}"
            self.problems.append(f"{self.prefix}{field} must be {limits}; got {_num(value)} {unit}")

    def duration_between(
        self, field: str, value: Duration | None, *, minimum: Duration, maximum: Duration, unit: str = "seconds"
    ) -> None:
        """`value` must lie in [minimum, maximum], compared (and reported) in `unit` (seconds, minutes or days)."""
        if value is None or value.is_unresolved():
            return
        got, low, high = (_in(d, unit) for d in (value, minimum, maximum))
        if not low <= got <= high:
            self.problems.append(
                f"{self.prefix}{field} must be between {_num(low)} and {_num(high)} {unit}; got {_num(got)} {unit}"
            )

    def duration_at_least(self, field: str, value: Duration | None, *, minimum: Duration, why: str) -> None:
        """`value` must be at least `minimum` seconds; `why` says where the limit comes from."""
        if value is None or value.is_unresolved() or minimum.is_unresolved():
            return
        got, low = _in(value, "seconds"), _in(minimum, "seconds")
        if got < low:
            self.problems.append(
                f"{self.prefix}{field} must be at least {_num(low)} seconds ({why}); got {_num(got)} seconds"
            )

    def raise_if_any(self) -> None:
        """Raise one `AgentWaitPropsError` listing every problem recorded, if any."""
        if self.problems:
            raise AgentWaitPropsError(self.construct, self.problems)


def _in(duration: Duration, unit: str) -> float:
    if unit == "minutes":
        return duration.to_minutes(integral=False)
    if unit == "days":
        return duration.to_days(integral=False)
    return duration.to_seconds(integral=False)


def _num(value: float) -> str:
    """Whole numbers without a decimal point or exponent (1209600, not 1.2096e+06)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
