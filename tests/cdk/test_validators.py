"""External validators on every synthesized variant: cdk-nag's AwsSolutions pack and cfn-lint."""

from __future__ import annotations

import json

from aws_cdk.assertions import Annotations, Match
from cfnlint.api import lint
from tests.cdk.conftest import Synth


def test_cdk_nag_aws_solutions_finds_nothing_unacknowledged(variant: Synth) -> None:
    """AwsSolutionsChecks runs as a validation plugin at synth (a finding would have failed the fixture);
    the report lists no violation and the stack carries no error annotation."""
    report_path = variant.outdir / "validation-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {"pluginReports": []}
    violations = [
        (violation["ruleName"], construct["constructPath"])
        for plugin in report["pluginReports"]
        for violation in plugin.get("violations", [])
        for construct in violation["violatingConstructs"]
    ]
    assert violations == []
    assert Annotations.from_stack(variant.stack).find_error("*", Match.any_value()) == []


def test_every_acknowledgment_has_a_written_reason(variant: Synth) -> None:
    """Each cdk-nag acknowledgment in the tree carries a reason someone can audit."""
    acknowledged = {
        f"{construct.node.path} {rule}": reason
        for construct in variant.stack.node.find_all()
        for entry in construct.node.metadata
        if entry.type == "aws:cdk:acknowledged-rules"
        for rule, reason in entry.data.items()
    }
    assert any("AwsSolutions-L1" in key for key in acknowledged), "expected the python3.13 acknowledgment"
    for key, reason in acknowledged.items():
        assert isinstance(reason, str), key
        assert len(reason) >= 30, f"{key}: reason too thin: {reason!r}"


def test_cfn_lint_finds_no_errors(variant: Synth) -> None:
    matches = lint(json.dumps(variant.json), regions=["us-east-1"])
    errors = [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path))})" for m in matches if m.rule.id.startswith("E")]
    assert errors == []
