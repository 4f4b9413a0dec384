"""Every error agent-wait raises, in one tree.

```
WaitError ─┬─ PolicyError(ValueError)            a bad WaitPolicy; raised at construction, before anything is published
           ├─ EnvelopeError(ValueError)          a value that breaks the envelope contract (not JSON, wrong shape)
           │    ├─ QuestionTooLargeError         the question is over MAX_QUESTION_BYTES; publish a reference instead
           │    └─ MessageError                  an inbound start or answer message breaks its shape
           ├─ SignatureError(ValueError)         a webhook signature is missing, wrong, or outside the replay window
           ├─ ConfigurationError(ValueError)     a handler setting is missing or wrong (names every variable at fault)
           ├─ ArgumentError(ValueError)          an argument to a constructor or call has a value it cannot take
           ├─ RecipientError(ValueError)         a question names an email answerer that is not an address
           ├─ PasskeyError(ValueError)           a passkey cannot be registered, or no passkey can confirm an answer
           ├─ LedgerError                        the question ledger's store could not do what was asked
           │    ├─ LedgerUnavailableError        the store failed (throttling, network, permissions); SQS retries
           │    ├─ LedgerRejectedError(ValueError)  the store refused the request as invalid; retrying cannot help
           │    │    └─ LedgerIndexMissingError  the table lacks an index the call needs (deploy the current shape)
           │    ├─ QuestionNotFoundError(KeyError)  the call names a question the ledger does not hold
           │    ├─ LedgerCursorError(ValueError)  a page cursor this ledger did not make
           │    ├─ ThreadBusyError               another delivery holds the thread's lease; this one is retried later
           │    └─ NothingToRetryError(LookupError)  a retry was asked for a thread that is not failed
           ├─ AwsDeliveryError                   an AWS call did not deliver an envelope (names the call and the code)
           ├─ TeamsDeliveryError(RuntimeError)   a Teams Workflows webhook refused or dropped a card (names the status)
           ├─ WebhookTemplateError(ValueError)   a shaped webhook's template does not render one JSON value
           ├─ EmailDeliveryError(RuntimeError)   a question's emails could not all be sent (names recipients and codes)
           ├─ PushDeliveryError(RuntimeError)    a question's pushes could not all be sent (names devices and statuses)
           ├─ QueueUnavailableError              the entry queue or the dead-letter queue failed; the message is retried
           ├─ CallbackRefusedError               Lambda refused to complete a durable callback (timed out, done already)
           ├─ CallbackUnavailableError           completing a durable callback failed for now; the message is retried
           ├─ ArgumentsChangedError              a `@wait` call re-run on resume differs from the call approved
           ├─ ScheduleUnavailableError           a precise-deadline schedule was not put or deleted (names the code)
           ├─ VersionChangedError                a question waits in code a redeploy changed; its thread is failed
           ├─ ThreadStateError                   a hosted agent's stored thread (Pydantic AI history, Strands session)
           │    ├─ ThreadStateConflictError      another writer moved the thread first; this write lost, nothing saved
           │    ├─ ThreadStateTooLargeError(ValueError)  over the store's item limit, even compressed
           │    └─ ThreadStateUnavailableError   the store failed (throttling, network, permissions); SQS retries
           └─ MissingExtraError(ImportError)     an optional dependency is not installed; names the extra to install
```

Every error keeps a plain `.message` and its facts as attributes. Messages carry ids and values that
help fix the call, never question content (questions may hold personal data).

Long on purpose: the whole tree in one file, so a caller finds every error, the builtin it also is and the facts it
carries in one place, drawn above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = (
    "ArgumentError",
    "ArgumentsChangedError",
    "AwsDeliveryError",
    "CallbackRefusedError",
    "CallbackUnavailableError",
    "ConfigurationError",
    "EmailDeliveryError",
    "EnvelopeError",
    "GrantError",
    "LedgerCursorError",
    "LedgerError",
    "LedgerIndexMissingError",
    "LedgerRejectedError",
    "LedgerUnavailableError",
    "MessageError",
    "MissingExtraError",
    "NothingToRetryError",
    "PasskeyError",
    "PolicyError",
    "PushDeliveryError",
    "QuestionNotFoundError",
    "QuestionTooLargeError",
    "QueueUnavailableError",
    "RecipientError",
    "ScheduleUnavailableError",
    "SignatureError",
    "SlackDeliveryError",
    "TeamsDeliveryError",
    "ThreadBusyError",
    "ThreadStateConflictError",
    "ThreadStateError",
    "ThreadStateTooLargeError",
    "ThreadStateUnavailableError",
    "VersionChangedError",
    "WaitError",
    "WebhookTemplateError",
)


class WaitError(Exception):
    """Base class of every error agent-wait raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ArgumentsChangedError(WaitError):
    """Raised when a `@wait` call re-run on resume computes other arguments than the call that was approved.

    LangGraph runs the interrupted node again from its start on resume, so code before the question runs twice;
    when it is not deterministic (a clock, a random id, a fresh lookup) the call that would run differs from the
    one a person saw. The body does not run; the router fails the thread with `arguments_changed`. The message
    names the function and the parameters, never their values.
    """

    def __init__(self, function: str, changed: list[str]) -> None:
        names = ", ".join(changed) if changed else "the function itself"
        super().__init__(
            f"{function}() was approved with other arguments than its re-run computed (changed: {names}); nothing "
            "was run. Make the code before the question deterministic (or keep the value in the graph's state), "
            "then retry the thread"
        )
        self.function = function
        self.changed = tuple(changed)


class PolicyError(WaitError, ValueError):
    """Raised when a `WaitPolicy` field has a value it cannot accept."""

    def __init__(self, field: str, value: object, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class GrantError(WaitError, ValueError):
    """Raised when a standing grant cannot be made as asked (`agent_wait.policy.grants`). `code` is stable:
    `bad_grant`, `grants_off`, `not_grantable`, `widens`, `over_limit`, `not_granter`, or `unknown_grant` (no such
    grant that the caller may see); the message says what was wrong and what would be accepted."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class PasskeyError(WaitError, ValueError):
    """Raised when a passkey cannot be registered, or the options to confirm an answer cannot be made
    (`agent_wait.host.passkeys`). `code` is stable: `no_challenge`, `registration_refused`, `no_passkey` or
    `passkeys_off`; the message says what was wrong and what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class EnvelopeError(WaitError, ValueError):
    """Raised when a question, its arguments or an envelope field cannot be carried by the contract."""


class QuestionTooLargeError(EnvelopeError):
    """Raised when a question serialises to more than `MAX_QUESTION_BYTES`; publish a reference instead."""

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class MessageError(EnvelopeError):
    """Raised when an inbound start or answer message is not the shape the host accepts; `.reason` is a slug."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class SignatureError(WaitError, ValueError):
    """Raised by the replay-aware webhook verifier when a request must be refused; `.reason` says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class ConfigurationError(WaitError, ValueError):
    """Raised at cold start when a handler setting is missing or wrong; lists every problem at once."""

    def __init__(self, problems: Sequence[str], *, variables: Sequence[str] = ()) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)
        self.variables = tuple(variables)


class ArgumentError(WaitError, ValueError):
    """Raised when a constructor or call is given a value it cannot take; the message names it and the fix."""

    def __init__(self, message: str, *, argument: str | None = None) -> None:
        super().__init__(message)
        self.argument = argument
        """The parameter at fault, when there is one."""


class RecipientError(WaitError, ValueError):
    """Raised when a question's answerer principals name an email recipient that is not a plain address
    (`email:local@domain.tld`); `.recipients` holds the question's other recipients, who can still be sent to."""

    def __init__(self, message: str, *, recipients: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.recipients: tuple[Any, ...] = tuple(recipients)
        """The recipients that were found (`agent_wait.channels.recipients.Recipient`)."""


class ArgumentTypeError(WaitError, TypeError):
    """Raised when a call is given a value of a type it cannot take; the message names it and what to pass."""


class EmulatorError(WaitError, RuntimeError):
    """Raised by the local runner when the embedded emulator cannot run the stack (`agent_wait.local.stack`)."""


class LedgerError(WaitError):
    """Raised when the question ledger's store could not do what was asked; `.table` names it when known."""

    def __init__(self, message: str, *, table: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.table = table
        self.code = code
        """The store's own error code (`ProvisionedThroughputExceededException`, `ValidationException`, ...)."""


class LedgerUnavailableError(LedgerError):
    """Raised when the store failed (throttling, network, permissions); the message is retried and converges."""


class LedgerRejectedError(LedgerError, ValueError):
    """Raised when the store refused the request as invalid (DynamoDB `ValidationException`); never retried."""


class LedgerIndexMissingError(LedgerRejectedError):
    """Raised when the table has no index a query needs; deploy the table shape in `agent_wait.contract.schema`."""

    def __init__(self, message: str, *, index: str, table: str | None = None, code: str | None = None) -> None:
        super().__init__(message, table=table, code=code)
        self.index = index


class QuestionNotFoundError(LedgerError, KeyError):
    """Raised when a ledger call names a question it does not hold (`decide`, `mark_failed`)."""

    def __init__(self, thread_id: str, question_id: str, *, table: str | None = None) -> None:
        super().__init__(f"question {question_id} on thread {thread_id} is not in the ledger", table=table)
        self.thread_id = thread_id
        self.question_id = question_id


class LedgerCursorError(LedgerError, ValueError):
    """Raised by `Ledger.page` when the cursor is not one this ledger made; start again without one."""

    def __init__(self, message: str, *, table: str | None = None) -> None:
        super().__init__(message, table=table)


class ThreadBusyError(LedgerError):
    """Raised when another delivery holds the thread's lease past the wait; the message is retried later."""

    def __init__(self, message: str, *, thread_id: str, table: str | None = None) -> None:
        super().__init__(message, table=table)
        self.thread_id = thread_id


class NothingToRetryError(LedgerError, LookupError):
    """Raised by `retry_thread` when the thread is not failed: it never was, or a retry already ran."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"thread {thread_id} is not failed, so there is nothing to retry; list failed threads with "
            "`agent-wait failures`"
        )
        self.thread_id = thread_id


class ThreadStateError(WaitError):
    """Raised when a hosted agent's stored thread (a Pydantic AI history, a Strands session) cannot be kept."""

    def __init__(self, message: str, *, thread_id: str, table: str | None = None) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.table = table


class ThreadStateConflictError(ThreadStateError):
    """Raised when a conditional write loses: another writer advanced the thread's state since it was read."""


class ThreadStateTooLargeError(ThreadStateError, ValueError):
    """Raised when a thread's state is over the store's item limit even compressed; trim the history."""

    def __init__(self, message: str, *, thread_id: str, table: str | None = None, size: int, limit: int) -> None:
        super().__init__(message, thread_id=thread_id, table=table)
        self.size = size
        self.limit = limit


class ThreadStateUnavailableError(ThreadStateError):
    """Raised when the store itself failed (throttling, network, permissions); the message is retried."""


class AwsDeliveryError(WaitError):
    """Raised inside an AWS announcer's `deliver()` when the call did not deliver the envelope.

    The message names the call, the resource and the error code; `BaseAnnounce.announce` turns it into
    one log line and a counted failure, never an exception in the agent's run.
    """

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        """The AWS error code (`ThrottlingException`, `ResourceNotFoundException`, ...) when there is one."""


class SlackDeliveryError(WaitError, RuntimeError):
    """Raised inside the Slack announcer's `deliver()` when a question could not be posted or its message updated
    (no channel routed, the message gone, the bot removed from the channel). `BaseAnnounce.announce` turns it into
    one log line and a counted failure; the question and every other announcer carry on."""


class TeamsDeliveryError(WaitError, RuntimeError):
    """Raised inside the Teams announcer's `deliver()` when a card did not reach the Workflows webhook: a status
    other than 2xx after the retries a 429 or 5xx earns, or no answer. `BaseAnnounce.announce` turns it into one log
    line and a counted failure. The message names the webhook's origin and the status, never the URL (it carries
    the flow's signature) nor a recipient."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        """The last HTTP status the webhook answered; None when it never answered."""
        self.attempts = attempts
        """How many times the card was sent."""


class WebhookTemplateError(WaitError, ValueError):
    """Raised when a shaped webhook's template cannot be used: it does not parse, it uses something the sandbox
    forbids, or what it renders is not one JSON value. Raised when the announcer is built (every template is
    rendered for a sample question then) and, for a question that breaks it, inside `deliver()`."""

    def __init__(self, message: str, *, transition: str | None = None) -> None:
        super().__init__(message)
        self.transition = transition
        """The template's transition (`wait.created`, ...) or `default`; None when not one template's fault."""


class EmailDeliveryError(WaitError, RuntimeError):
    """Raised inside the email announcer's `deliver()` when a question's emails could not all be sent (no recipient,
    SES refused or failed for some); names each recipient and SES's error code, never the content.
    `BaseAnnounce.announce` turns it into one log line and a counted failure."""


class PushDeliveryError(WaitError, RuntimeError):
    """Raised inside the push announcer's `deliver()` when a question's pushes could not all be sent (a push service
    refused or failed for some devices); names each device and the push service's status, never the content.
    `BaseAnnounce.announce` turns it into one log line and a counted failure, and the next delivery tries again."""


class QueueUnavailableError(WaitError):
    """Raised when an entry-queue or dead-letter-queue call failed (SQS throttled, refused or unreachable).

    Applying a message that needed it is retried; the message names the call and the code.
    """

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        """The queue's error code (`ThrottlingException`, `AWS.SimpleQueueService.NonExistentQueue`, ...), if any."""


class CallbackRefusedError(WaitError):
    """Raised when AWS Lambda refuses to complete a durable function's callback: it timed out, was completed or
    failed already, or no longer exists. Retrying cannot help: the execution no longer waits on it.

    The router records the question `failed` (never `resumed`) and dead-letters the answer `callback_refused`.
    """

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        """Lambda's error code (`CallbackTimeoutException`, `ResourceNotFoundException`, ...), if any."""


class CallbackUnavailableError(WaitError):
    """Raised when completing a durable function's callback failed for now (Lambda throttled, failed on its side or
    was unreachable): the answer's message is retried."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        """Lambda's error code (`TooManyRequestsException`, ...), or the type of the connection error."""


class VersionChangedError(WaitError):
    """Raised when a question would resume into code a redeploy changed and nothing allows it (docs/versions.md):
    the router fails the thread `version_changed`; `agent-wait retry THREAD` resumes it after a fix."""

    def __init__(
        self, message: str, *, thread_id: str, question_id: str, old: object = None, new: object = None
    ) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.question_id = question_id
        self.old = old
        """The version the question was asked under (`agent_wait.asking.versions.Version`)."""
        self.new = new
        """The version running now (`agent_wait.asking.versions.Version`)."""


class MissingExtraError(WaitError, ImportError):
    """Raised when a binding or provider is imported without the optional dependency it needs."""

    def __init__(self, module: str, package: str, extra: str) -> None:
        super().__init__(
            f"{module} needs {package}, which is not installed; install it with: pip install 'agent-wait[{extra}]'"
        )
        self.extra = extra
        self.package = package


class ScheduleUnavailableError(WaitError):
    """Raised when EventBridge Scheduler did not put or delete a precise-deadline schedule (throttled, refused,
    unreachable); the engine logs and counts it (`ScheduleFailures`) and the sweep's minute still catches the
    question. The message names the call, the schedule and the code."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


def require_extra(module: str, package: str, extra: str, *, load: bool = True) -> None:
    """Raise `MissingExtraError` naming `extra` unless `package` can be imported.

    Args:
        module: the agent-wait module that needs it (named in the message).
        package: the top-level package to look for.
        extra: the extra that installs it.
        load: import the package now (the default); False only checks that it is installed, so a
            host that never uses it (a Pydantic AI deployment and LangGraph) does not pay for importing it.
    """
    import importlib
    import importlib.util

    if not load:
        try:
            installed = importlib.util.find_spec(package) is not None
        except ValueError:  # already imported, without a __spec__ (a stand-in module): it is there
            installed = True
        if not installed:
            raise MissingExtraError(module, package, extra)
        return
    try:
        importlib.import_module(package)
    except ImportError as exc:
        raise MissingExtraError(module, package, extra) from exc
