// The question view (#/questions/{id}): one question read from GET /questions/{id} and drawn card by card,
// then read again every two seconds while it is shown, so that a decision made elsewhere (another person, a
// link, the deadline), a vote or an escalation step shows without a reload.

import { refused, request } from "./inbox-api.js";
import { renderHistory, renderPolicy, renderVotes } from "./inbox-facts.js";
import { argumentRow } from "./inbox-fields.js";
import { renderAnswer } from "./inbox-forms.js";
import {
  approving,
  audience,
  callOf,
  countdown,
  elicitationOf,
  elicitationText,
  isVoting,
  outcomeText,
  reviewOf,
  schemaOf,
  stillNeeded,
  summary,
} from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { answer, byId, clear, isObject, make, markdown, say, show, table, value, when } from "./shared.js";

var POLL_MS = 2000;
// The question shown: {id, view, timer, keys (an Idempotency-Key per body sent), busy while one is sent, and the
// fields the answer card drew: editFields, editFor, schemaFields, reviews}. Null on every other view.
var current = null;
var drawn = []; // what else draws on the question view once its cards are drawn (the grant box)

// Run `draw(view)` each time the question view is drawn, after its own cards.
export function afterRender(draw) {
  drawn.push(draw);
}

export function shownQuestion() {
  return current;
}

export function stopPolling() {
  if (current && current.timer) {
    clearInterval(current.timer);
  }
  current = null;
}

export function openQuestion(id) {
  stopPolling();
  current = { id: id, view: null, timer: null, keys: {} };
  show("list-view", false);
  say("Loading the question…");
  return request("/questions/" + encodeURIComponent(id)).then(
    function (reply) {
      if (!current || current.id !== id) {
        return;
      }
      if (reply.status === 401) {
        signOut("Your sign-in has expired. Sign in again.");
        return;
      }
      if (reply.status !== 200) {
        show("detail-view", false);
        say(refused(reply), true);
        return;
      }
      renderQuestion(reply.data);
      show("detail-view", true);
      byId("detail-heading").focus();
      say(openingLine(reply.data));
      current.timer = setInterval(poll, POLL_MS);
    },
    function () {
      say("Could not reach the API. Check your connection and reload the page.", true);
    },
  );
}

function openingLine(view) {
  if (view.status !== "open") {
    return outcomeText(view) || "Status: " + view.status;
  }
  if (isVoting(view)) {
    return "Open: " + stillNeeded(view) + "." + (isObject(view.your_vote) ? " Your vote is recorded." : "");
  }
  return "Open: waiting for an answer.";
}

// While a question is shown, read it again every few seconds: when it is decided elsewhere (another
// person, a link, the deadline) its buttons go and its outcome shows.
function poll() {
  var watching = current;
  if (!watching || !watching.view || watching.busy) {
    return;
  }
  request("/questions/" + encodeURIComponent(watching.id)).then(
    function (reply) {
      if (current !== watching || reply.status !== 200) {
        if (reply.status === 401) {
          signOut("Your sign-in has expired. Sign in again.");
        }
        return;
      }
      var before = watching.view;
      var view = reply.data;
      if (view.status === before.status && JSON.stringify(view.outcome) === JSON.stringify(before.outcome)) {
        if (followUps(view) !== followUps(before)) {
          // A vote or an escalation step while the question stays open: the form keeps what was typed.
          watching.view = view;
          renderPolicy(view);
          renderVotes(view);
          if (JSON.stringify(view.your_vote) !== JSON.stringify(before.your_vote)) {
            renderAnswer(view, watching);
          }
          if (isVoting(view) && view.votes.length > before.votes.length) {
            var last = view.votes[view.votes.length - 1];
            say("New vote: " + (last.by || "someone") + " voted " + last.action + ". " + stillNeeded(view) + ".");
          } else if (JSON.stringify(view.answerers) !== JSON.stringify(before.answerers)) {
            say("Escalated: " + audience(view.answerers) + " may answer now.");
          }
        }
        return;
      }
      renderQuestion(view);
      if (before.status === "open" && view.status !== "open") {
        say("Decided elsewhere: " + outcomeText(view) + " There is nothing left to answer.");
      }
      if (["resumed", "failed", "cancelled"].indexOf(view.status) >= 0) {
        clearInterval(watching.timer);
      }
    },
    function () {
      return null; // a missed poll is retried on the next tick
    },
  );
}

// What can change on an open question besides its outcome: votes, who may answer, the escalation step.
function followUps(view) {
  return JSON.stringify([view.votes, view.your_vote, view.answerers, view.escalation]);
}

// Draws every card of the question from `view`, the API's question view.
export function renderQuestion(view) {
  current.view = view;
  byId("detail-heading").textContent = summary(view);
  var pill = byId("detail-status");
  pill.textContent = view.status;
  pill.className = "pill " + view.status;
  if (view.status === "open") {
    countdown(byId("detail-left"), view.policy.expires_at);
  } else {
    byId("detail-left").removeAttribute("data-expires");
    byId("detail-left").classList.remove("due-soon");
    byId("detail-left").textContent = "— (" + view.status + ")";
  }
  byId("detail-thread").textContent = view.thread_id;
  byId("detail-id").textContent = view.question_id;
  byId("detail-asked").textContent = when(view.asked_at);
  renderOutcome(view);
  renderAsked(view);
  renderPolicy(view);
  renderVotes(view);
  renderAnswer(view, current);
  renderHistory(view);
  drawn.forEach(function (draw) {
    draw(view);
  });
}

// A decided question leads with what decided it; the history keeps the whole story.
function renderOutcome(view) {
  var outcome = view.outcome;
  var failed = view.status === "failed";
  show("outcome-section", Boolean(outcome) || failed);
  var box = byId("outcome");
  clear(box);
  var kind = failed ? "failed" : outcome && outcome.expired ? "expired" : outcome ? outcome.status : "";
  kind = kind === "withdrawn" ? "cancelled" : kind; // drawn alike: nobody answered it
  byId("outcome-section").className = "card outcome " + kind;
  if (outcome) {
    box.appendChild(make("p", outcomeText(view)));
    if (outcome.status !== "cancelled" && outcome.status !== "withdrawn") {
      answer(box, outcome.answer, reviewOf(view));
    }
    if (outcome.resumed_at) {
      box.appendChild(make("p", "The agent carried on at " + when(outcome.resumed_at) + ".", "muted"));
    }
  }
  if (view.failure) {
    box.appendChild(make("p", "The agent failed while carrying on: " + view.failure.error));
  }
}

// -- what is asked ------------------------------------------------------------------------------------

// Whether the person may change the call's arguments before approving it: the table's values are inputs then.
function editable(view) {
  var allowed = (view.policy && view.policy.allowed_actions) || [];
  return (
    view.status === "open" &&
    !(isVoting(view) && isObject(view.your_vote)) &&
    Boolean(callOf(view)) &&
    !schemaOf(view) &&
    view.policy.rules.edits !== false &&
    Boolean(approving(allowed))
  );
}

function renderAsked(view) {
  var review = reviewOf(view);
  var call = review ? null : callOf(view);
  var description = byId("call-description");
  show("call-line", Boolean(call));
  show("call-description", Boolean(call && call.description));
  if (call && call.description) {
    markdown(description, call.description);
  } else {
    clear(description);
  }
  show("args", Boolean(call));
  show("review-line", Boolean(review));
  show("question-fields", false);
  show("question-json", !call && !review);
  var rows = byId("args-rows");
  clear(rows);
  clear(byId("question-fields"));
  // An open review is asked and answered call by call in the answer card: this card would only repeat it.
  show("asked-section", !(review && view.status === "open"));
  if (review) {
    renderReviewed(view, review);
    return;
  }
  var asks = elicitationOf(view);
  if (asks) {
    // An MCP server's round: its messages and links only (the form is the answer card's).
    show("question-json", false);
    show("question-fields", true);
    markdown(byId("question-fields"), elicitationText(asks));
    return;
  }
  if (!call) {
    // The answer's schema is shown as the form below, not again here.
    var shown = view.question;
    if (isObject(shown) && schemaOf(view)) {
      shown = Object.assign({}, shown);
      delete shown.response_schema;
      delete shown.answer_schema;
    }
    show("question-json", false);
    show("question-fields", true);
    if (isObject(shown) || Array.isArray(shown)) {
      value(byId("question-fields"), shown);
    } else {
      markdown(byId("question-fields"), typeof shown === "string" ? shown : JSON.stringify(shown));
    }
    return;
  }
  byId("call-function").textContent = call.name;
  var edits = editable(view);
  byId("call-edits").textContent = edits ? ". Change an argument to approve with your value:" : ", with these arguments:";
  // While it can be edited, each argument is a field in its row: the values are shown once, and can be changed.
  current.editFields = current.editFields && edits && current.editFor === view.question_id ? current.editFields : [];
  var kept = {};
  current.editFields.forEach(function (field) {
    kept[field.name] = field.input.value;
  });
  current.editFields = [];
  current.editFor = view.question_id;
  Object.keys(call.args).forEach(function (name, index) {
    var edited = argumentRow(rows, name, call.args[name], edits ? "edit-arg-" + index : null);
    if (edited) {
      if (name in kept) {
        edited.input.value = kept[name];
      }
      current.editFields.push(edited);
    }
  });
}

// A decided or open batched review in "What is asked": how many calls; once decided, each with its arguments.
function renderReviewed(view, review) {
  var open = view.status === "open";
  var count = review.length === 1 ? "One tool call" : review.length + " tool calls";
  byId("review-line").textContent = open
    ? count + " of one model turn wait for your review: decide each below, then send your decisions together."
    : count + " of one model turn were reviewed:";
  if (open) {
    return;
  }
  var shown = byId("question-fields");
  show("question-fields", true);
  review.forEach(function (request, index) {
    var block = shown.appendChild(make("div", null, "reviewed"));
    block.appendChild(make("p", index + 1 + ". " + request.name, "review-name"));
    if (request.description) {
      markdown(block.appendChild(make("div", null, "markdown")), request.description);
    }
    block.appendChild(table(request.args));
  });
}
