"""A synthesized CloudWatch dashboard body, read back: its JSON, the metrics it names, and a local HTML rendering of
its widget grid (titles, positions, metric names; no data) for a screenshot in Chromium.

CloudWatch lays a dashboard out on a grid 24 units wide; each widget has `x`, `y`, `width` and `height` in those
units. `render_html` draws the same grid with CSS grid, one card per widget.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any

REGION = "us-east-1"
_SEARCH = re.compile(r"SEARCH\('\{(?P<schema>[^}]*)\}\s*(?P<terms>[^']*)',\s*'(?P<stat>[^']+)',\s*(?P<period>\d+)\)")
_TERM = re.compile(r'(?P<key>[A-Za-z0-9_.\-]+)="(?P<value>[^"]*)"')
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass(frozen=True)
class DrawnMetric:
    """One metric a widget draws: a plain metric, or each metric a SEARCH expression matches."""

    namespace: str
    name: str
    dimensions: dict[str, str]
    """Dimension name to value; a SEARCH's dimension without a fixed value maps to `*`."""
    stat: str
    label: str
    search: bool = False


def _token(part: Any) -> str:
    if part == {"Ref": "AWS::Region"}:
        return REGION
    if isinstance(part, dict) and isinstance(part.get("Ref"), str):
        return part["Ref"]  # a function's or a queue's name: its logical id stands in for it
    if isinstance(part, dict) and "Fn::GetAtt" in part:
        logical, attribute = part["Fn::GetAtt"]
        return f"arn:aws:cloudwatch:{REGION}:123456789012:alarm:{logical}" if attribute == "Arn" else logical
    return "TOKEN"


def dashboard_body(template: dict[str, Any]) -> dict[str, Any]:
    """The one dashboard's body in a synthesized template, its tokens replaced by readable stand-ins."""
    (dashboard,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    body = dashboard["Properties"]["DashboardBody"]
    if isinstance(body, dict) and "Fn::Join" in body:
        separator, parts = body["Fn::Join"]
        body = separator.join(p if isinstance(p, str) else _token(p) for p in parts)
    return json.loads(body)


def drawn_metrics(widget: dict[str, Any]) -> list[DrawnMetric]:
    """Every metric a widget's `metrics` names, SEARCH expressions parsed into their namespace and dimensions."""
    found: list[DrawnMetric] = []
    for entry in widget.get("properties", {}).get("metrics", []):
        options = entry[-1] if entry and isinstance(entry[-1], dict) else {}
        if "expression" in options:
            match = _SEARCH.search(options["expression"])
            assert match, f"an expression that is not a SEARCH: {options['expression']!r}"
            namespace, *keys = [k.strip() for k in match["schema"].split(",")]
            terms = {m["key"]: m["value"] for m in _TERM.finditer(match["terms"])}
            name = terms.pop("MetricName")
            dimensions = {key: terms.get(key, "*") for key in keys}
            found.append(DrawnMetric(namespace, name, dimensions, match["stat"], options.get("label", ""), True))
            continue
        plain = [p for p in entry if not isinstance(p, dict)]
        namespace, name, *pairs = plain
        dimensions = dict(zip(pairs[::2], pairs[1::2], strict=True))
        found.append(DrawnMetric(namespace, name, dimensions, options.get("stat", ""), options.get("label", name)))
    return found


def every_metric(body: dict[str, Any]) -> list[DrawnMetric]:
    return [metric for widget in body["widgets"] for metric in drawn_metrics(widget)]


def _legend(metric: DrawnMetric, colour: str) -> str:
    shown = {k: v for k, v in metric.dimensions.items() if k != "service"}
    where = ", ".join(f"{k}={v}" for k, v in shown.items())
    what = f"{metric.name} by {', '.join(k for k, v in shown.items() if v == '*')}" if metric.search else metric.name
    detail = f"{metric.namespace} · {what}" + (f" ({where})" if where and not metric.search else "")
    label = metric.label or ("each reason" if metric.search else metric.name)
    return (
        f'<li title="{html.escape(detail)}"><span class="swatch" style="background:{colour}"></span>'
        f'<b>{html.escape(label)}</b> <span class="stat">{html.escape(metric.stat)}</span> '
        f'<span class="detail">{html.escape(detail)}</span></li>'
    )


def _card(widget: dict[str, Any]) -> str:
    properties = widget.get("properties", {})
    place = (
        f"grid-column:{widget['x'] + 1} / span {widget['width']};grid-row:{widget['y'] + 1} / span {widget['height']}"
    )
    if widget["type"] == "text":
        heading = properties.get("markdown", "").lstrip("#").strip()
        return f'<section class="text" style="{place}"><h2>{html.escape(heading)}</h2></section>'
    title = html.escape(properties.get("title", ""))
    if widget["type"] == "alarm":
        names = [re.sub(r"[0-9A-F]{8}$", "", arn.rsplit(":", 1)[-1]) for arn in properties.get("alarms", [])]
        chips = "".join(f'<li><span class="chip">no data yet</span> {html.escape(n)}</li>' for n in names)
        return f'<section class="card" style="{place}"><h3>{title}</h3><ul class="alarms">{chips}</ul></section>'
    metrics = drawn_metrics(widget)
    legend = "".join(_legend(m, _COLOURS[i % len(_COLOURS)]) for i, m in enumerate(metrics))
    view = properties.get("view", "timeSeries")
    if view == "singleValue":
        shape = '<div class="value">no data</div>'
    else:
        axis = properties.get("yAxis", {})
        left, right = axis.get("left", {}).get("label", ""), axis.get("right", {}).get("label", "")
        shape = (
            f'<div class="plot"><span class="axis">{html.escape(left)}</span>'
            f'<span class="axis right">{html.escape(right)}</span></div>'
        )
    return (
        f'<section class="card {view}" style="{place}"><h3>{title}</h3>{shape}'
        f'<ul class="legend">{legend}</ul></section>'
    )


def render_html(body: dict[str, Any], *, title: str = "agent-wait dashboard (layout preview)") -> str:
    """A page drawing the body's widgets on CloudWatch's 24-column grid: no data, only what each widget shows."""
    cards = "".join(_card(widget) for widget in body["widgets"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font: 13px/1.35 system-ui, sans-serif; margin: 16px; background: #f2f3f3; color: #16191f; }}
h1 {{ font-size: 18px; margin: 0 0 12px; }}
.grid {{ display: grid; grid-template-columns: repeat(24, 1fr); grid-auto-rows: 40px; gap: 8px; }}
.card {{ background: #fff; border: 1px solid #d5dbdb; border-radius: 4px; padding: 8px 10px; overflow: hidden;
  display: flex; flex-direction: column; }}
.text h2 {{ font-size: 16px; margin: 10px 0 0; }}
h3 {{ font-size: 14px; margin: 0 0 6px; }}
.plot {{ flex: 1; min-height: 40px; border-left: 1px solid #aab7b8; border-bottom: 1px solid #aab7b8;
  position: relative; background: repeating-linear-gradient(0deg, #fff, #fff 23px, #f2f3f3 24px); }}
.axis {{ position: absolute; left: 4px; top: 2px; color: #687078; font-size: 11px; }}
.axis.right {{ left: auto; right: 4px; }}
.value {{ font-size: 34px; color: #687078; flex: 1; }}
ul {{ list-style: none; margin: 6px 0 0; padding: 0; }}
.legend li {{ margin: 1px 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: 12px; }}
.swatch {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; }}
.stat {{ color: #687078; }}
.detail {{ color: #545b64; font-family: ui-monospace, monospace; font-size: 11px; }}
.alarms li {{ margin: 4px 0; }}
.chip {{ display: inline-block; background: #d5dbdb; border-radius: 8px; padding: 0 8px; font-size: 11px; }}
</style></head>
<body><h1>{html.escape(title)}</h1><div class="grid">{cards}</div></body></html>
"""
