// Where the "Approve and allow…" form lives on a question: its button beside Approve, the policy's offers as
// one-click presets, the suggestion (GET /grants/suggestions: people approved exactly this call again and again)
// and the dry run (POST /grants/dry-run: which past questions the grant in the form would have decided). Suggest,
// never assume: nothing is granted until the person sends the form.

import { request } from "./inbox-api.js";
import { fillGrantForm, grantProblem, grantRules, readGrantForm, resetGrantForm } from "./inbox-grant-form.js";
import { reachText } from "./inbox-grant-words.js";
import { shownQuestion } from "./inbox-question.js";
import { byId, clear, isObject, make, plural, show, when } from "./shared.js";

var loaded = { id: null, body: null }; // the suggestions of the question shown, read once per question

// After the question view draws: the button beside Approve when the policy allows grants, else no grant box.
export function renderGrantBox(view) {
  var shown = shownQuestion();
  var grants = grantRules(view);
  if (shown.grantFor !== view.question_id) {
    // A question opened (again): a fresh form, and its suggestions read once while it is shown.
    shown.grantFor = view.question_id;
    loaded = { id: view.question_id, body: null };
    show("grant-made", false);
    show("grant-box", false);
    show("grant-suggestion", false);
    show("grant-offers", false);
    clearDryRun();
    if (grants) {
      resetGrantForm(view);
      loadSuggestions(view.question_id);
    }
  }
  if (!grants) {
    show("grant-box", false);
    show("grant-suggestion", false);
    return;
  }
  var approve = document.querySelector('#actions button[data-action="approve"]');
  var open = make("button", "Approve and allow…", "quiet");
  open.type = "button";
  open.id = "grant-open";
  open.setAttribute("aria-controls", "grant-box");
  open.setAttribute("aria-expanded", String(!byId("grant-box").hidden));
  approve.insertAdjacentElement("afterend", open);
}

function loadSuggestions(id) {
  request("/grants/suggestions?question_id=" + encodeURIComponent(id)).then(function (reply) {
    if (loaded.id !== id || reply.status !== 200) {
      return;
    }
    loaded.body = reply.data;
    drawOffers(reply.data.offers || []);
    drawSuggestion(reply.data);
  });
}

// The button beside Approve opens the form (and closes it again).
export function toggleGrantBox(event) {
  if (!event.target.closest("#grant-open")) {
    return;
  }
  openGrantBox(byId("grant-box").hidden);
}

export function openGrantBox(visible) {
  show("grant-box", visible);
  var button = byId("grant-open");
  if (button) {
    button.setAttribute("aria-expanded", String(visible));
  }
  if (visible) {
    byId("grant-heading").focus({ preventScroll: true });
    byId("grant-box").scrollIntoView({ block: "nearest" }); // beside the question on a laptop: no scroll there
  }
}

function drawOffers(offers) {
  var box = byId("grant-offers");
  clear(box);
  show("grant-offers", offers.length > 0);
  if (!offers.length) {
    return;
  }
  box.appendChild(make("span", "Presets:", "muted"));
  offers.forEach(function (offer) {
    var button = box.appendChild(make("button", offer.label, "quiet preset"));
    button.type = "button";
    button.addEventListener("click", function () {
      fillGrantForm(offer.grant);
      grantProblem("");
      clearDryRun();
    });
  });
}

// "You approved exactly this call 3 times in the last 7 days": offered, with the form set to exactly this call.
function drawSuggestion(body) {
  var suggestion = body.suggestion;
  var box = byId("grant-suggestion");
  clear(box);
  show("grant-suggestion", isObject(suggestion));
  if (!isObject(suggestion)) {
    return;
  }
  var people = {};
  suggestion.approvals.forEach(function (approval) {
    people[approval.answered_by || "someone"] = true;
  });
  var text =
    "This exact call was approved " + plural(suggestion.count, "time") + " in the last " + body.window.days +
    " days (by " + Object.keys(people).join(", ") + "). Allow it for a while instead of being asked again?";
  box.appendChild(make("p", text));
  var button = box.appendChild(make("button", "Review a grant and its dry run", "quiet"));
  button.type = "button";
  button.id = "grant-suggested";
  button.addEventListener("click", function () {
    // The approvals were on other threads: the grant they suggest is this exact call on any thread, if allowed.
    var scope = byId("grant-scope");
    if (Array.prototype.some.call(scope.options, function (each) {
      return each.value === "agent";
    })) {
      scope.value = "agent";
    }
    openGrantBox(true);
    dryRun();
  });
}

export function clearDryRun() {
  clear(byId("grant-dry"));
  show("grant-dry", false);
}

// Which past questions the grant in the form would have decided, and which not (the API's GrantTerms.covers).
export function dryRun() {
  var grant;
  try {
    grant = readGrantForm();
  } catch (error) {
    grantProblem(error.message);
    return;
  }
  var id = shownQuestion().id;
  var box = byId("grant-dry");
  clear(box);
  show("grant-dry", true);
  box.appendChild(make("p", "Looking through the past week’s questions…", "muted"));
  request("/grants/dry-run", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ question_id: id, grant: grant }),
  }).then(function (reply) {
    if (!shownQuestion() || shownQuestion().id !== id) {
      return;
    }
    clear(box);
    if (reply.status !== 200) {
      show("grant-dry", false);
      grantProblem(reply.data && reply.data.detail ? reply.data.detail : "The dry run failed (" + reply.status + ").");
      return;
    }
    grantProblem("");
    drawDryRun(box, reply.data);
  });
}

function drawDryRun(box, data) {
  var reach = reachText(data.terms.pins, data.terms.parameters);
  var head = "Dry run: in the last " + data.window.days + " days this grant (" + reach + ") would have decided ";
  box.appendChild(make("p", head + plural(data.covered_count, "past question") + ", approving them:", "dry-head"));
  var list = box.appendChild(make("ul", null, "dry-list"));
  data.covered.forEach(function (row) {
    list.appendChild(make("li", pastLine(row), row.action === "approve" ? "" : "dry-differs"));
  });
  if (!data.covered.length) {
    list.appendChild(make("li", "none", "muted"));
  }
  var not = plural(data.not_covered_count, "other question") + " of " + data.terms.function + " it would not have.";
  box.appendChild(make("p", not, "muted"));
  if (data.read.capped) {
    box.appendChild(make("p", "Only the first " + data.read.rows + " decided questions were read.", "muted"));
  }
}

// "amount 200, order_id “A-7”: approve by bob@example.com, 4 Dec 2026, 10:41:34 UTC".
function pastLine(row) {
  var args = Object.keys(row.args || {}).map(function (name) {
    var value = row.args[name];
    return name + " " + (typeof value === "string" ? "“" + value + "”" : JSON.stringify(value));
  });
  var how = row.outcome === "answered" ? (row.action || "answered") + " by " + (row.answered_by || "someone") : row.outcome;
  var differs = row.action === "approve" ? "" : " (the grant would have approved it)";
  return args.join(", ") + ": " + how + ", " + when(row.decided_at) + differs;
}
