// Standing grants in words, for the "Approve and allow…" form and the Grants page: a pin ("amount ≤ 500"), a
// grant's reach ("issue_refund with amount ≤ 500, any order_id"), a time to live ("1 hour") and its uses.

import { isObject, plural } from "./shared.js";

function shown(value) {
  return typeof value === "string" ? "“" + value + "”" : JSON.stringify(value);
}

// One pin, as {kind: operand}: "amount ≤ 500", "order_id starts with “A-”".
export function pinText(name, pin) {
  var kind = isObject(pin) ? Object.keys(pin)[0] : "";
  var operand = isObject(pin) ? pin[kind] : null;
  var words = {
    equals: " = " + shown(operand),
    at_most: " ≤ " + shown(operand),
    at_least: " ≥ " + shown(operand),
    prefix: " starts with " + shown(operand),
    glob: " matches " + shown(operand),
    one_of: Array.isArray(operand) ? " is one of " + operand.map(shown).join(", ") : "",
  };
  return name + (words[kind] || " " + JSON.stringify(pin));
}

// Every parameter of a grant: its pin, or "any <name>" where it has none.
export function reachText(pins, parameters) {
  var names = Array.isArray(parameters) && parameters.length ? parameters : Object.keys(pins || {});
  return names
    .map(function (name) {
      return pins && name in pins ? pinText(name, pins[name]) : "any " + name;
    })
    .join(", ");
}

export function scopeText(scope, threadId) {
  return scope === "thread" ? "this thread only" + (threadId ? " (" + threadId + ")" : "") : "any thread of the agent";
}

export function usesText(uses) {
  return uses === null || uses === undefined ? "any number of asks" : plural(uses, "ask");
}

var UNITS = [
  [604800, "week"],
  [86400, "day"],
  [3600, "hour"],
  [60, "minute"],
  [1, "second"],
];

// ISO 8601 durations as the policy writes them (P1D, PT1H, PT15M, P1W, or seconds): their length in seconds.
export function seconds(duration) {
  if (typeof duration === "number") {
    return duration;
  }
  var found = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(String(duration));
  if (!found) {
    return NaN;
  }
  var parts = [604800, 86400, 3600, 60, 1];
  return parts.reduce(function (total, unit, index) {
    return total + unit * Number(found[index + 1] || 0);
  }, 0);
}

// 3600 → "1 hour", 5400 → "90 minutes": the largest unit that divides it.
export function durationText(duration) {
  var total = seconds(duration);
  for (var i = 0; i < UNITS.length; i++) {
    if (total >= UNITS[i][0] && total % UNITS[i][0] === 0) {
      return plural(total / UNITS[i][0], UNITS[i][1]);
    }
  }
  return String(duration);
}

var DOORS = { api: "the inbox or the API", link: "a signed link", slack: "Slack", teams: "Teams", agui: "AG-UI" };

// The door a grant was made through, in words.
export function viaText(via) {
  return DOORS[via] || String(via);
}
