// What the question page shows beside the question: its policy, its votes (a quorum question) and its history.

import {
  audience,
  cancelText,
  escalationText,
  isVoting,
  reviewOf,
  stillNeeded,
  tagText,
  who,
} from "./inbox-reading.js";
import { answer, answerLine, byId, clear, isObject, make, plural, show, when } from "./shared.js";

// -- policy -------------------------------------------------------------------------------------------

// "If nobody answers": the default answer as a person reads it, or what happens without one.
function renderDefault(policy) {
  var cell = byId("policy-default");
  clear(cell);
  if (!policy.expires_at || policy.expires_at === "never") {
    cell.textContent = "Nothing: the question has no deadline.";
  } else if (policy.default === undefined || policy.default === null) {
    cell.textContent = "No default: at the deadline the agent is told nobody answered.";
  } else if (isObject(policy.default) && typeof policy.default.action === "string") {
    cell.textContent = answerLine(policy.default);
  } else {
    answer(cell, policy.default);
  }
}

// The policy card: allowed answers, the deadline (and the Extend form when it may move), what happens if
// nobody answers or someone cancels, who may answer now, escalation, edits and tags.
export function renderPolicy(view) {
  var policy = view.policy || {};
  var rules = policy.rules || {};
  byId("policy-cancel").textContent = cancelText(policy);
  byId("policy-actions").textContent = (policy.allowed_actions || []).join(", ") || "any";
  byId("policy-deadline").textContent = when(policy.expires_at);
  // Extend: only an open question whose policy lets someone move its deadline; the API says whether you may.
  var extendable = view.status === "open" && isObject(rules.extend);
  show("extend-term", extendable);
  show("extend-row", extendable);
  renderDefault(policy);
  // Who may answer now (escalation steps included), as the API reports it; the policy's own list before that.
  var answerers = "answerers" in view ? view.answerers : rules.answerers;
  byId("policy-answerers").textContent = audience(answerers);
  var escalated = isObject(view.escalation);
  show("policy-escalation-term", escalated);
  show("policy-escalation", escalated);
  byId("policy-escalation").textContent = escalated ? escalationText(view) : "";
  var review = reviewOf(view);
  var editable = review
    ? review
        .filter(function (request) {
          return request.editable;
        })
        .map(function (request) {
          return request.name;
        })
    : null;
  if (editable) {
    byId("policy-edits").textContent = editable.length ? "allowed for " + editable.join(", ") : "not allowed";
  } else {
    byId("policy-edits").textContent = rules.edits === false ? "not allowed" : "allowed";
  }
  // An escalation step re-routes the question: its tags now, and as it was asked.
  var tags = tagText(policy.tags);
  if (escalated && view.escalation.level > 0 && tagText(view.escalation.tags) !== tags) {
    tags = tagText(view.escalation.tags) + " (asked with " + tags + ")";
  }
  byId("policy-tags").textContent = tags;
}

// -- votes (a quorum question) ------------------------------------------------------------------------

export function renderVotes(view) {
  var voting = isVoting(view);
  show("votes-section", voting);
  var rows = byId("votes-rows");
  clear(rows);
  if (!voting) {
    return;
  }
  byId("votes-count").textContent = voteCount(view);
  var rule = "Each answer is a vote; " + plural(view.needed, "approval") + " from different people decide.";
  if (view.veto && view.veto.length) {
    rule += " Any " + view.veto.join(" or ") + " decides at once.";
  }
  byId("votes-rule").textContent = rule;
  var veto = view.veto || [];
  view.votes.forEach(function (vote) {
    var row = make("tr");
    row.appendChild(make("td", vote.by || "someone unnamed"));
    var kind = veto.indexOf(vote.action) >= 0 ? "vote-veto" : "vote-approve";
    row.appendChild(make("td", vote.action || "(no action)", kind));
    row.appendChild(make("td", when(vote.at)));
    rows.appendChild(row);
  });
  show("votes-table", view.votes.length > 0);
  show("votes-none", view.votes.length === 0);
  var mine = isObject(view.your_vote) ? view.your_vote : null;
  show("your-vote", Boolean(mine));
  var again = view.status === "open" ? " A second vote changes nothing." : "";
  byId("your-vote").textContent = mine
    ? "Your vote “" + mine.action + "” is recorded (" + when(mine.at) + ")." + again
    : "";
}

// The count, and once voting is over, what ended it: the quorum, a veto, or the deadline.
function voteCount(view) {
  var count = view.approvals + " of " + view.needed + " approvals";
  if (view.status === "open") {
    return count + ": " + stillNeeded(view) + ".";
  }
  var outcome = view.outcome || {};
  var action = isObject(outcome.answer) ? outcome.answer.action : null;
  if (outcome.expired) {
    return count + " when the deadline passed: the default applied.";
  }
  if (outcome.status === "cancelled") {
    return count + " when the question was cancelled.";
  }
  if (outcome.status === "withdrawn") {
    return count + " when the question was withdrawn.";
  }
  if ((view.veto || []).indexOf(action) >= 0) {
    return count + ": a " + action + " decided it.";
  }
  return count + ": the quorum decided it.";
}

// -- history ------------------------------------------------------------------------------------------

var VIA = {
  api: "the inbox or the answer API",
  link: "a signed link",
  queue: "the entry queue",
  deadline: "the deadline",
  grant: "a standing grant (see Grants)",
};

// What happened to the question, in order: asked, decided (by whom, how), carried on, failed.
export function renderHistory(view) {
  var entries = byId("history");
  clear(entries);
  var calls = reviewOf(view);
  var add = function (text, shown, className) {
    var item = make("li", text, className);
    if (shown !== undefined) {
      answer(item, shown, calls);
    }
    entries.appendChild(item);
  };
  add("Asked at " + when(view.asked_at) + ".");
  var outcome = view.outcome;
  if (outcome && outcome.expired) {
    add(
      "The deadline passed at " +
        when(outcome.decided_at) +
        " with no answer: the default applied. Nobody decided this.",
      outcome.answer,
      "decided expired",
    );
  } else if (outcome && outcome.status === "cancelled") {
    var reason = outcome.reason ? ": “" + outcome.reason + "”" : "";
    add(who(outcome) + " cancelled it at " + when(outcome.decided_at) + reason + ". The agent got:", outcome.answer, "decided cancelled");
  } else if (outcome && outcome.status === "withdrawn") {
    add("Withdrawn at " + when(outcome.decided_at) + ": the agent moved on without an answer.", undefined, "decided cancelled");
  } else if (outcome) {
    var via = VIA[outcome.via] || outcome.via || "an unknown way";
    add(who(outcome) + " answered at " + when(outcome.decided_at) + ", by " + via + ":", outcome.answer, "decided");
  }
  if (outcome && outcome.resumed_at) {
    add("The agent carried on at " + when(outcome.resumed_at) + ".");
  }
  if (view.failure) {
    var failed = "The agent failed while carrying on, at " + when(view.failure.failed_at) + ": " + view.failure.error;
    add(failed, undefined, "decided failed");
  }
}
