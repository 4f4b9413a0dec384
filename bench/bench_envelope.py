"""What building and serialising one envelope costs, next to json.dumps of the same dict.

Run: uv run --frozen python bench/bench_envelope.py

Measures, side by side in one process (interleaved, best of several rounds):
  envelope   WaitEnvelope.create(question) + .to_json()       (the question is built once)
  question   Question(...) + WaitEnvelope.create + .to_json()   (the whole ask path: JSON and size checks too)
  to_json    .to_json() of an envelope already built               (serialising alone)
  baseline   json.dumps(<the same envelope dict>)
and prints microseconds per operation and each as a ratio to the baseline. No assertion: figures only.
"""

from __future__ import annotations

import json
import platform
import sys
import timeit
from datetime import UTC, datetime

from agent_wait import Question, WaitEnvelope, WaitPolicy

ROUNDS = 25
NUMBER = 2_000

POLICY = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no response within P3D"},
    answer_ttl="PT15M",
    tags={"approver_group": "finance"},
)
VALUE = {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
ASKED_AT = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
QUESTION = Question(
    "order-4471", "a1b2c3d4e5f60718", VALUE, POLICY, source={"function": "issue_refund"}, asked_at=ASKED_AT
)
SAME_DICT = WaitEnvelope.create(QUESTION).to_dict()


def envelope_op() -> str:
    return WaitEnvelope.create(QUESTION).to_json()


def question_op() -> str:
    question = Question(
        "order-4471", "a1b2c3d4e5f60718", VALUE, POLICY, source={"function": "issue_refund"}, asked_at=ASKED_AT
    )
    return WaitEnvelope.create(question).to_json()


ENVELOPE = WaitEnvelope.create(QUESTION)


def to_json_op() -> str:
    return ENVELOPE.to_json()


def baseline_op() -> str:
    return json.dumps(SAME_DICT)


def main() -> int:
    ops = {"envelope": envelope_op, "question": question_op, "to_json": to_json_op, "baseline": baseline_op}
    best = dict.fromkeys(ops, float("inf"))
    for _ in range(ROUNDS):  # interleaved, so a noisy moment hits every measurement alike
        for name, op in ops.items():
            best[name] = min(best[name], timeit.timeit(op, number=NUMBER) / NUMBER)
    print(f"python {platform.python_version()} on {platform.machine()} ({sys.platform}); best of {ROUNDS} x {NUMBER:,}")
    print(f"envelope dict: {len(baseline_op())} bytes as json.dumps")
    for name, label in (
        ("baseline", "json.dumps(same dict)"),
        ("to_json", "to_json of a built envelope"),
        ("envelope", "WaitEnvelope.create + to_json"),
        ("question", "Question + create + to_json"),
    ):
        ratio = best[name] / best["baseline"]
        print(f"  {label:<32} {best[name] * 1e6:8.2f} µs/op   x{ratio:5.1f} json.dumps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
