// The "Approve and allow…" form: beside Approve on a question whose policy allows standing grants
// (`policy.rules.grants`), it approves the call and grants later asks of it, within the policy's limits: where (this
// thread, or any thread of the agent), which calls (each argument exactly as asked by default, or a bound, a prefix,
// a glob, or any value), for how long and for how many asks. It sends the approval with its `grant` field through the
// one answer call; the API checks the grant and says why it refuses one (`grant_refused`), and the question stays open.

import { post } from "./inbox-answer.js";
import { refused } from "./inbox-api.js";
import { durationText, reachText, scopeText, seconds, usesText } from "./inbox-grant-words.js";
import { renderQuestion, shownQuestion } from "./inbox-question.js";
import { approving, callOf, isVoting, schemaOf } from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { byId, clear, isObject, make, say, show, when } from "./shared.js";

var TTLS = ["PT15M", "PT1H", "PT4H", "PT8H", "P1D", "P7D", "P30D"];
var USES = [1, 2, 3, 5, 10, 20, 50, 100];
var KINDS = {
  equals: "exactly",
  at_most: "at most",
  at_least: "at least",
  prefix: "starts with",
  glob: "matches glob",
  any: "any value",
};
var pinRows = []; // {name, asked, kind (select), operand (input)} per argument of the call shown

// The policy's grant rules when the question shown may be approved and granted, else null.
export function grantRules(view) {
  var rules = (view.policy && view.policy.rules) || {};
  var allowed = (view.policy && view.policy.allowed_actions) || [];
  var call = callOf(view);
  var asked = isObject(view.question) && view.source && view.question.function === view.source.function;
  if (view.status !== "open" || !isObject(rules.grants) || !call || !asked || schemaOf(view) || isVoting(view)) {
    return null;
  }
  return approving(allowed) === "approve" ? rules.grants : null;
}

function option(select, value, label) {
  var node = select.appendChild(make("option", label));
  node.value = String(value);
  return node;
}

// Fill the form for `view`: the policy's scopes, times and uses, and a row per argument, exactly as asked.
export function resetGrantForm(view) {
  var grants = grantRules(view);
  if (!grants) {
    return;
  }
  var scope = byId("grant-scope");
  clear(scope);
  (grants.scopes || ["thread", "agent"]).forEach(function (name) {
    option(scope, name, scopeText(name, name === "thread" ? view.thread_id : ""));
  });
  var ttl = byId("grant-ttl");
  clear(ttl);
  var longest = seconds(grants.max_ttl);
  TTLS.filter(function (each) {
    return seconds(each) < longest;
  })
    .concat([grants.max_ttl])
    .forEach(function (each) {
      option(ttl, each, durationText(each));
    });
  ttl.value = seconds(grants.max_ttl) > 3600 ? "PT1H" : grants.max_ttl;
  var uses = byId("grant-uses");
  clear(uses);
  var most = typeof grants.max_uses === "number" ? grants.max_uses : null;
  USES.filter(function (n) {
    return most === null || n < most;
  })
    .concat(most === null ? [] : [most])
    .forEach(function (n) {
      option(uses, n, usesText(n));
    });
  if (most === null) {
    option(uses, "any", "any number until it expires");
  }
  drawPins(callOf(view).args);
  show("grant-problem", false);
}

// A row per argument: its name, how it is pinned, and the value the pin holds (the asked value to start with).
function drawPins(args) {
  var rows = byId("grant-pin-rows");
  clear(rows);
  pinRows = Object.keys(args).map(function (name, index) {
    var asked = args[name];
    var row = rows.appendChild(make("tr"));
    var label = make("label", name);
    label.setAttribute("for", "grant-pin-" + index);
    row.appendChild(make("th")).appendChild(label);
    var kind = make("select");
    kind.id = "grant-pin-" + index;
    var kinds = ["equals"];
    if (typeof asked === "number") {
      kinds.push("at_most", "at_least");
    } else if (typeof asked === "string") {
      kinds.push("prefix", "glob");
    }
    kinds.push("any");
    kinds.forEach(function (each) {
      option(kind, each, KINDS[each]);
    });
    row.appendChild(make("td")).appendChild(kind);
    var operand = make("input");
    operand.id = "grant-pin-" + index + "-value";
    operand.setAttribute("aria-label", name + ": the value it is pinned to");
    operand.type = typeof asked === "number" ? "number" : "text";
    operand.step = "any";
    row.appendChild(make("td")).appendChild(operand);
    var state = { name: name, asked: asked, kind: kind, operand: operand };
    kind.addEventListener("change", function () {
      pinChanged(state);
    });
    pinChanged(state);
    return state;
  });
}

// "exactly" shows the asked value and cannot change it; a bound, a prefix or a glob starts from it; "any" has none.
function pinChanged(state) {
  var kind = state.kind.value;
  state.operand.hidden = kind === "any";
  state.operand.disabled = kind === "equals";
  if (kind === "equals" || state.operand.value === "") {
    state.operand.value = typeof state.asked === "string" ? state.asked : JSON.stringify(state.asked);
  }
}

// Set the form to a grant request (a policy's offer, or a suggestion): scope, time, uses and pins.
export function fillGrantForm(grant) {
  byId("grant-scope").value = grant.scope;
  var ttl = byId("grant-ttl");
  var known = Array.prototype.some.call(ttl.options, function (each) {
    return each.value === grant.ttl;
  });
  if (!known) {
    option(ttl, grant.ttl, durationText(grant.ttl));
  }
  ttl.value = grant.ttl;
  byId("grant-uses").value = grant.uses === null ? "any" : String(grant.uses);
  pinRows.forEach(function (state) {
    var pin = grant.pins ? grant.pins[state.name] : { equals: state.asked };
    var kind = isObject(pin) ? Object.keys(pin)[0] : "any";
    state.kind.value = kind;
    state.operand.value = "";
    if (isObject(pin) && kind !== "equals") {
      state.operand.value = String(pin[kind]);
    }
    pinChanged(state);
  });
}

// The form as a grant request: {scope, ttl, uses, pins}; pins null when every argument is exactly as asked.
export function readGrantForm() {
  var pins = {};
  var exact = true;
  pinRows.forEach(function (state) {
    var kind = state.kind.value;
    if (kind === "equals") {
      pins[state.name] = { equals: state.asked };
      return;
    }
    exact = false;
    if (kind === "any") {
      return;
    }
    var text = String(state.operand.value || "").trim();
    var number = Number(text);
    if (typeof state.asked === "number" && (text === "" || !isFinite(number))) {
      throw new Error("Give " + state.name + " a number to be " + KINDS[kind] + ".");
    }
    pins[state.name] = {};
    pins[state.name][kind] = typeof state.asked === "number" ? number : text;
  });
  var uses = byId("grant-uses").value;
  return {
    scope: byId("grant-scope").value,
    ttl: byId("grant-ttl").value,
    uses: uses === "any" ? null : Number(uses),
    pins: exact ? null : pins,
  };
}

export function grantProblem(text) {
  byId("grant-problem").textContent = text || "";
  show("grant-problem", Boolean(text));
  if (text) {
    byId("grant-problem").scrollIntoView({ block: "nearest" });
  }
}

// Approve the question shown and grant what the form says, with the note if there is one.
export function sendGrant(event) {
  event.preventDefault();
  var grant;
  try {
    grant = readGrantForm();
  } catch (error) {
    grantProblem(error.message);
    return;
  }
  grantProblem("");
  var body = { action: "approve", grant: grant };
  var note = String(byId("note").value || "").trim();
  if (note) {
    body.note = note;
  }
  var lost = "Could not reach the API; your approval may not have been sent. Press the button again.";
  post("answer", { answer: body }, "Sending your approval and grant…", granted, lost);
}

function granted(reply, data) {
  if (reply.status === 200 && isObject(data.grant)) {
    renderQuestion(data);
    showGrantMade(data.grant);
    say("Done: approved, and granted " + grantLine(data.grant) + ".", true);
  } else if (reply.status === 422 && data.reason === "grant_refused") {
    grantProblem(data.detail);
    say("Not recorded: the grant was refused (see why under the form). The question is still open.", false);
  } else if (reply.status === 401) {
    signOut("Your sign-in has expired. Sign in again, then answer.");
  } else {
    if (isObject(data.question)) {
      renderQuestion(data.question);
    }
    say(refused(reply), true);
  }
}

// "issue_refund with amount ≤ 500, any order_id, on any thread of the agent, for 1 hour, 3 asks".
export function grantLine(grant) {
  var reach = grant.exact ? "exactly this call" : grant.function + " with " + reachText(grant.pins, grant.parameters);
  var until = ", until " + when(grant.expires_at) + ", for up to ";
  return reach + ", on " + scopeText(grant.scope) + until + usesText(grant.uses);
}

function showGrantMade(grant) {
  var box = byId("grant-made-text");
  clear(box);
  box.appendChild(make("p", "You granted " + grantLine(grant) + "."));
  var link = box.appendChild(make("a", "See it on the Grants page"));
  link.href = "#/grants";
  show("grant-made", true);
  show("grant-box", false);
  shownQuestion().grantMade = grant.grant_id;
}
