// The signed-link confirmation page. Loading it answers nothing: it reads the token from the URL
// fragment (which browsers never send to a server), asks this site what the link is for, and answers only
// when the button is pressed. Everything from the server is shown with textContent, never parsed as HTML.

import { callOf, reviewOf, summary } from "./inbox-reading.js"; // what a question asks, as the inbox reads it
import * as page from "./shared.js"; // the inbox's time format, Markdown and values

var REASONS = {
  malformed: "This link is incomplete or damaged. Open it exactly as it was sent to you, or ask for a new one.",
  unknown_key: "This link is no longer valid: the key that signed it was retired. Ask for a new link.",
  tampered: "This link was changed after it was sent. Open it exactly as it was sent to you, or ask for a new one.",
  expired: "This link has expired, or its question's deadline has passed.",
  wrong_question: "This link belongs to another question. Open the link sent for this one.",
  links_off: "Answer links are turned off on this site.",
  unknown_question: "There is no such question.",
  action_not_allowed: "This question does not accept this link's answer.",
  answerer_not_allowed: "This question may only be answered by particular people, and this link is not one of them.",
  edit_not_allowed: "This question does not accept edited answers.",
  already_voted: "Your vote is recorded already; a second vote changes nothing.",
};

function byId(id) {
  return document.getElementById(id);
}

var statusLine = byId("status");
var button = byId("confirm");
var note = byId("note");
var token = String(location.hash || "").replace(/^#/, "");
if (token && typeof history !== "undefined" && history.replaceState) {
  // The token is a capability: once read, keep it out of the address bar and the browser's history.
  history.replaceState(null, "", location.pathname + location.search);
}
var action = "";
var label = "";

function say(text) {
  statusLine.textContent = text;
}

function when(iso) {
  return iso ? page.when(iso) : "no deadline";
}

function refused(status, data) {
  var reason = data && typeof data.reason === "string" ? data.reason : "";
  if (REASONS[reason]) {
    return "Refused: " + REASONS[reason];
  }
  var detail = data && typeof data.detail === "string" ? data.detail : "the server answered " + status;
  return "Refused (" + (reason || status) + "): " + detail;
}

function decided(view) {
  var outcome = (view && view.outcome) || {};
  if (outcome.expired) {
    return "No answer is needed any more: the deadline passed and the default applied.";
  }
  if (outcome.status === "cancelled") {
    return "This question was cancelled; no answer is needed.";
  }
  if (outcome.status === "withdrawn") {
    return "This question was withdrawn; no answer is needed.";
  }
  var text = "Already decided";
  if (outcome.answered_by) {
    text += " by " + outcome.answered_by;
  }
  if (outcome.answer && typeof outcome.answer.action === "string") {
    text += " (" + outcome.answer.action + ")";
  }
  if (outcome.decided_at) {
    text += " at " + when(outcome.decided_at);
  }
  return text + ". Your link changes nothing now.";
}

// A quorum question counts votes: `remaining` says how many more approvals it needs.
function isVoting(view) {
  return Boolean(view) && typeof view.remaining === "number";
}

function stillNeeded(view) {
  var n = view.remaining;
  return n + " more approval" + (n === 1 ? "" : "s") + " needed";
}

function showVotes(view) {
  var voting = isVoting(view);
  byId("votes-term").hidden = !voting;
  byId("votes").hidden = !voting;
  if (!voting) {
    return;
  }
  var lines = (view.votes || []).map(function (vote) {
    return (vote.by || "someone unnamed") + ": " + (vote.action || "(no action)") + ", " + when(vote.at);
  });
  var count = view.approvals + " of " + view.needed + " approvals";
  if (view.status === "open") {
    count += "; " + stillNeeded(view);
  }
  byId("votes").textContent = (lines.length ? lines.join("\n") + "\n" : "No votes yet.\n") + count + ".";
}

// A link that approves and grants: the policy's offer, its label and what it allows in words.
function showGrant(grant) {
  byId("grant-term").hidden = !grant;
  byId("grant").hidden = !grant;
  if (!grant) {
    return;
  }
  var box = byId("grant");
  box.textContent = "";
  box.appendChild(page.make("strong", grant.label));
  var allows = "Allows " + grant.allows + ". You can revoke it from the inbox's Grants page.";
  box.appendChild(page.make("span", allows, "grant-allows"));
}

function confirmLabel(link) {
  return link.grant ? "Confirm: approve and allow" : "Confirm: " + link.action;
}

// A call's arguments as the inbox shows them, one row each.
function showArguments(args) {
  var rows = byId("args-rows");
  rows.textContent = "";
  Object.keys(args).forEach(function (name) {
    var row = document.createElement("tr");
    var label = document.createElement("td");
    label.textContent = name;
    row.appendChild(label);
    row.appendChild(page.value(document.createElement("td"), args[name]));
    rows.appendChild(row);
  });
}

// A batched review: one block per call, numbered, with its description and its arguments, as the inbox shows it.
function showReview(review) {
  var box = byId("calls");
  box.textContent = "";
  review.forEach(function (call, index) {
    var block = box.appendChild(page.make("div", null, "reviewed"));
    block.setAttribute("data-call", call.name);
    block.appendChild(page.make("p", index + 1 + ". " + call.name, "review-name"));
    if (call.description) {
      page.markdown(block.appendChild(page.make("div", null, "markdown")), call.description);
    }
    block.appendChild(page.table(call.args));
  });
  box.hidden = false;
}

// A question that is not a call: its text as Markdown, its other fields as a table (never as JSON).
function showQuestion(view) {
  var shown = view.question;
  var box = byId("question");
  box.textContent = "";
  if (page.isObject(shown)) {
    shown = Object.assign({}, shown);
    delete shown.response_schema;
    delete shown.answer_schema;
    page.value(box, shown);
  } else if (typeof shown === "string") {
    page.markdown(box, shown);
  } else {
    page.value(box, shown);
  }
  box.hidden = false;
}

// What is asked, as the inbox reads it: its headline, then a batched review's calls, the one call with its
// arguments, or the question's own text and fields.
function show(view, link) {
  byId("headline").textContent = summary(view);
  var review = reviewOf(view);
  var call = review ? null : callOf(view);
  byId("call").hidden = !call;
  byId("description").hidden = !(call && call.description);
  if (call && call.description) {
    page.markdown(byId("description"), call.description);
  }
  if (call) {
    byId("function").textContent = call.name;
    showArguments(call.args);
  } else if (review) {
    showReview(review);
  } else {
    showQuestion(view);
  }
  var calls = review ? review.length : 0;
  byId("action").textContent = link.action + (calls > 1 ? " (each of the " + calls + " calls)" : "");
  byId("deadline").textContent = when(link.expires_at);
  showGrant(link.grant);
  showVotes(view);
  byId("details").hidden = false;
  byId("asked").hidden = false;
}

function post(path, body) {
  return fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
    referrerPolicy: "no-referrer",
  }).then(function (response) {
    return response.json().then(
      function (data) {
        return { status: response.status, data: data };
      },
      function () {
        return { status: response.status, data: {} };
      },
    );
  });
}

function load() {
  if (!token) {
    say(REASONS.malformed);
    return Promise.resolve();
  }
  // Relative paths: the page is /questions/<id>/confirm, so these are /questions/<id>/link[/answer]
  // under whatever stage or base path the API is served from.
  return post("link", { token: token }).then(
    function (reply) {
      if (reply.status !== 200) {
        say(refused(reply.status, reply.data));
        return;
      }
      var view = reply.data.question;
      action = reply.data.link.action;
      label = confirmLabel(reply.data.link);
      show(view, reply.data.link);
      if (view.status !== "open") {
        say(decided(view));
        return;
      }
      if (isVoting(view) && view.your_vote) {
        say(
          "Your vote “" + view.your_vote.action + "” is recorded already; a second vote changes nothing. " +
            stillNeeded(view) + ".",
        );
        return;
      }
      button.textContent = label;
      button.disabled = false;
      byId("answer").hidden = false;
      say("Check the details, then press “" + label + "” to answer.");
    },
    function () {
      say("Could not reach the server. Check your connection and reload the page.");
    },
  );
}

function answer() {
  button.disabled = true;
  say("Sending your answer…");
  var body = { token: token };
  var text = String(note.value || "").trim();
  if (text) {
    body.note = text;
  }
  return post("link/answer", body).then(
    function (reply) {
      var data = reply.data || {};
      if (reply.status === 202) {
        // A vote on a quorum question: recorded, and the question waits for more approvals.
        showVotes(data);
        say("Your vote “" + action + "” is recorded; " + stillNeeded(data) + ".");
        byId("answer").hidden = true;
      } else if (reply.status === 200) {
        showVotes(data);
        var waiting = isVoting(data) && data.status === "open" ? " " + stillNeeded(data) + "." : "";
        say(
          data.result === "repeated"
            ? "Your answer “" + action + "” was already recorded; nothing changed." + waiting
            : "Done: your answer “" + action + "” is recorded" + (data.grant ? ", the grant is made" : "") +
              ", and the agent carries on.",
        );
        byId("answer").hidden = true;
      } else if (reply.status === 409 && data.reason === "already_voted" && isVoting(data.question)) {
        showVotes(data.question);
        say(REASONS.already_voted + " " + stillNeeded(data.question) + ".");
        byId("answer").hidden = true;
      } else if (reply.status === 409 || reply.status === 410) {
        say(decided(data.question));
        byId("answer").hidden = true;
      } else {
        say(refused(reply.status, data));
      }
      statusLine.focus();
    },
    function () {
      // Safe to press again: the same link answers at most once.
      say("Could not reach the server; your answer may not have been sent. Press the button again.");
      button.disabled = false;
      statusLine.focus();
    },
  );
}

button.addEventListener("click", answer);
load();
