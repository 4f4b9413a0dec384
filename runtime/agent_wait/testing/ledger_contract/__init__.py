"""The ledger conformance suite: every rule a question ledger keeps, one plain function each, one file per
capability.

`REQUIRED` holds the core's rules (`questions.py`, `decisions.py`), which every backend passes; each capability
a backend declares (`agent_wait.ledger.Capability`, by the classes it derives from) adds its own:
`followups.py` (and `notices.py`, what a question owes), `starts.py`, `failures.py`, `leases.py`, `notes.py`,
`refusals.py`, `grants.py`, `hand_overs.py`.
`rules_for` lists what a backend must pass:

    @pytest.mark.parametrize("rule", ledger_contract.rules_for(MyLedger), ids=lambda rule: rule.__name__)
    def test_my_ledger_conforms(rule):
        rule(lambda: MyLedger(...))

Each rule builds fresh ids, so a factory may return the same store every time. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from agent_wait.ledger import Capability, FollowUpLedger, Ledger, capabilities_of, marks_unannounced
from agent_wait.testing.ledger_contract import (
    decisions,
    extensions,
    failures,
    followups,
    grants,
    hand_overs,
    leases,
    notes,
    notices,
    questions,
    refusals,
    starts,
)
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, sample_envelope

__all__ = ("BY_CAPABILITY", "EVERY", "REQUIRED", "T0", "LedgerFactory", "Rule", "rules_for", "sample_envelope")

Rule = Callable[[LedgerFactory], None]
"""One rule: called with a factory of the ledger under test; raises `AssertionError` naming what broke."""

REQUIRED: tuple[Rule, ...] = (
    questions.open_records_the_question,
    questions.reopen_never_overwrites,
    questions.questions_lists_a_thread_by_status,
    questions.a_question_is_found_by_its_id_alone,
    questions.pages_list_a_status_soonest_deadline_first,
    decisions.first_decision_wins,
    decisions.a_decision_records_who_made_it_and_how,
    decisions.a_cancel_keeps_who_cancelled_and_why,
    decisions.racing_decisions_have_one_winner,
    decisions.decide_unknown_question_raises_key_error,
    decisions.resumed_only_after_a_decision,
    decisions.pages_list_resumed_questions_by_their_status,
    questions.the_trace_a_question_was_asked_in_is_kept_with_it,
)
"""Every ledger passes these: the core (`Ledger`)."""

BY_CAPABILITY: Mapping[Capability, tuple[Rule, ...]] = MappingProxyType(
    {
        Capability.FOLLOW_UPS: (
            followups.due_returns_exactly_the_due_open_questions_soonest_first,
            followups.advance_is_a_compare_and_set,
            followups.advance_with_a_decision_decides_in_the_same_write,
            followups.a_racing_decide_and_advance_have_one_winner,
            followups.progress_round_trips,
            notices.owed_notices_keep_a_question_due_until_they_are_told,
            notices.a_decision_keeps_an_unannounced_question_owing_its_wait_created,
            notices.each_counted_step_is_owed_apart,
            followups.a_decision_to_hand_over_stays_due_until_resumed,
            notices.resuming_keeps_a_question_due_while_it_owes_notices,
            followups.oldest_open_is_the_earliest_asked_open_question,
            extensions.extend_moves_only_an_open_unchanged_deadline,
        ),
        Capability.STARTS: (starts.a_start_is_recorded_once,),
        Capability.FAILURES: (
            failures.a_failed_resume_is_recorded_and_retried_once,
            failures.a_failed_start_keeps_its_input_for_a_retry,
        ),
        Capability.LEASES: (
            leases.one_lease_per_thread,
            leases.racing_leases_have_one_holder,
            leases.a_release_records_the_open_questions_the_next_lease_reads,
            leases.a_release_records_the_decisions_handed_over_until_one_clears_them,
            leases.a_release_records_the_finished_start_the_next_lease_reads,
            leases.a_holder_that_does_not_run_the_agent_never_takes_over_a_dead_run,
        ),
        Capability.NOTES: (notes.a_release_leaves_a_note_the_next_lease_takes,),
        Capability.REFUSALS: (refusals.the_last_refusal_is_kept_on_the_row_and_changes_nothing_else,),
        Capability.GRANTS: (
            grants.a_grant_is_kept_once_under_its_question,
            grants.live_grants_are_the_functions_unrevoked_unexpired_with_a_use_left,
            grants.a_use_is_taken_once_per_question_and_never_past_the_last,
            grants.concurrent_uses_of_a_one_use_grant_have_one_winner,
            grants.a_grant_without_a_use_limit_decides_until_it_expires,
            grants.a_revoke_holds_for_every_later_use_and_the_first_is_kept,
        ),
        Capability.HAND_OVERS: (
            hand_overs.a_door_decides_and_hands_over_in_one_write,
            hand_overs.a_door_never_decides_while_a_run_holds_the_thread,
            hand_overs.a_door_never_decides_on_a_failed_thread_or_a_question_the_agent_moved_past,
            hand_overs.a_question_decided_first_is_not_handed_over_again,
            hand_overs.a_deciding_vote_hands_over_only_at_the_version_read,
        ),
    }
)
"""The rules of each capability, required only of a backend that declares it."""

EVERY: tuple[Rule, ...] = (
    REQUIRED
    + tuple(rule for rules in BY_CAPABILITY.values() for rule in rules)
    + (
        followups.a_question_put_announced_is_marked_back_when_its_announcement_fails,
        followups.open_questions_are_counted,
        followups.the_open_count_is_claimed_by_one_run_and_kept,
    )
)
"""Every rule of the suite."""


def rules_for(ledger: Ledger | type[Ledger] | Any) -> tuple[Rule, ...]:
    """The rules `ledger` (an instance or its class) must pass: the core's, and those of each capability it
    declares."""
    declared = capabilities_of(ledger)
    optional = (followups.a_question_put_announced_is_marked_back_when_its_announcement_fails,)
    return (
        REQUIRED
        + tuple(rule for capability in Capability if capability in declared for rule in BY_CAPABILITY[capability])
        + (optional if marks_unannounced(ledger) else ())
        + ((followups.open_questions_are_counted,) if _counts_open(ledger) else ())
        + ((followups.the_open_count_is_claimed_by_one_run_and_kept,) if _keeps_open_count(ledger) else ())
    )


def _counts_open(ledger: Any) -> bool:
    """True when `ledger` (an instance or its class) implements `FollowUpLedger.count_open`."""
    kind = ledger if isinstance(ledger, type) else type(ledger)
    return issubclass(kind, FollowUpLedger) and kind.count_open is not FollowUpLedger.count_open


def _keeps_open_count(ledger: Any) -> bool:
    """True when `ledger` (an instance or its class) implements `FollowUpLedger.open_count`."""
    kind = ledger if isinstance(ledger, type) else type(ledger)
    return issubclass(kind, FollowUpLedger) and kind.open_count is not FollowUpLedger.open_count
