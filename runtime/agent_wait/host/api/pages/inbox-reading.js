// What a question says, in words: the call it asks about (or a batched review's calls), a one-line summary,
// the time left, who decided it and how, its votes, who may answer and what a cancel gives the agent. Plain
// functions of the API's question view; the views draw with them.

import { answerLine, isObject, plural, when } from "./shared.js";

// -- time left ----------------------------------------------------------------------------------------

function timeLeft(iso) {
  if (!iso || iso === "never") {
    return { text: "no deadline", soon: false };
  }
  var ms = new Date(iso).getTime() - Date.now();
  if (isNaN(ms)) {
    return { text: String(iso), soon: false };
  }
  if (ms <= 0) {
    return { text: "overdue", soon: true };
  }
  var s = Math.floor(ms / 1000);
  var d = Math.floor(s / 86400);
  var h = Math.floor((s % 86400) / 3600);
  var m = Math.floor((s % 3600) / 60);
  var sec = s % 60;
  var two = function (n) {
    return (n < 10 ? "0" : "") + n;
  };
  var text;
  if (d > 0) {
    text = d + "d " + h + "h " + two(m) + "m";
  } else if (h > 0) {
    text = h + "h " + two(m) + "m " + two(sec) + "s";
  } else {
    text = m + "m " + two(sec) + "s";
  }
  return { text: text, soon: ms < 3600 * 1000 };
}

// A cell counting down to `iso`; `tick` repaints every such cell each second.
export function countdown(node, iso) {
  node.setAttribute("data-expires", iso || "never");
  paint(node);
}

function paint(node) {
  var left = timeLeft(node.getAttribute("data-expires"));
  node.textContent = left.text;
  node.classList.toggle("due-soon", left.soon);
}

export function tick() {
  var nodes = document.querySelectorAll("[data-expires]");
  for (var i = 0; i < nodes.length; i++) {
    paint(nodes[i]);
  }
}

// -- what a question asks -----------------------------------------------------------------------------

// The call a question asks about, as {name, args}: a `@wait` call, a LangChain per-call approval, or an
// Agent Inbox request (alone or in a list of one). Null for anything else.
export function callOf(view) {
  var question = view.question;
  if (Array.isArray(question) && question.length === 1) {
    question = question[0];
  }
  var description = isObject(question) && typeof question.description === "string" ? question.description : "";
  if (isObject(question) && isObject(question.action_request) && isObject(question.action_request.args)) {
    var action = String(question.action_request.action || "(unnamed call)");
    return { name: action, args: question.action_request.args, description: description };
  }
  if (!isObject(question) || !isObject(question.args)) {
    return null;
  }
  var name = view.source && typeof view.source.function === "string" ? view.source.function : "";
  if (!name && typeof question.function === "string") {
    name = question.function;
  }
  if (!name && question.type === "tool_approval" && typeof question.name === "string") {
    name = question.name;
  }
  return { name: name || "(unnamed call)", args: question.args, description: description };
}

// A LangChain HumanInTheLoopMiddleware review in its batched mode: every call the model asked for in one
// turn, each decided on its own. A list of {name, args, description, decisions, editable}; null otherwise.
export function reviewOf(view) {
  var source = view.source || {};
  var question = view.question;
  if (source.dialect !== "langchain_hitl" || source.mode === "per_call" || !isObject(question)) {
    return null;
  }
  if (!Array.isArray(question.action_requests) || !Array.isArray(question.review_configs)) {
    return null;
  }
  var allowed = {};
  question.review_configs.forEach(function (config) {
    if (isObject(config) && !(config.action_name in allowed)) {
      allowed[config.action_name] = Array.isArray(config.allowed_decisions) ? config.allowed_decisions : [];
    }
  });
  return question.action_requests.map(function (request) {
    var decisions = allowed[request.name] || [];
    return {
      name: String(request.name),
      args: isObject(request.args) ? request.args : {},
      description: typeof request.description === "string" ? request.description : "",
      decisions: decisions,
      editable: decisions.indexOf("edit") >= 0,
    };
  });
}

function callText(name, args) {
  var parts = Object.keys(args).map(function (key) {
    return key + "=" + JSON.stringify(args[key]);
  });
  return name + "(" + parts.join(", ") + ")";
}

// Who answered, as a person reads it: a queue sender's AWS identity says which role or user sent it.
export function who(outcome) {
  var by = String(outcome.answered_by || "");
  if (!by) {
    return "someone unnamed";
  }
  if (by === "agent-wait:deadline") {
    return "nobody (the deadline)";
  }
  var unvouched = /^sqs:(.+)$/.exec(by);
  if (unvouched) {
    return "a sender on the entry queue who could not be vouched for (AWS identity " + unvouched[1] + ")";
  }
  var identity = /^(A[A-Z0-9]{15,})(?::(.+))?$/.exec(by);
  if (identity) {
    var kind = identity[1].slice(0, 4) === "AROA" ? "role" : "AWS identity";
    return identity[2]
      ? identity[2] + " (a " + kind + " session on the entry queue, " + identity[1] + ")"
      : "a sender on the entry queue (" + kind + " " + identity[1] + ")";
  }
  return by;
}

// The action that runs the call as asked, and that carries edited arguments: `approve`, or Agent Inbox's `accept`.
export function approving(allowed) {
  return ["approve", "accept"].filter(function (action) {
    return allowed.indexOf(action) >= 0;
  })[0];
}

// A schema the question declares for its whole answer (`response_schema` on the view): the answer is the
// form's values, with the chosen action only when the schema has an `action` property.
export function answerIsSchema(view) {
  return isObject(view.response_schema) && schemaOf(view) === view.response_schema;
}

function clip(text, length) {
  return text.length > length ? text.slice(0, length - 1) + "…" : text;
}

// An MCP server's elicitation round (`mcp_elicitation`, as channels/reading.py reads it): its requests, or null.
export function elicitationOf(view) {
  var question = view.question;
  var dialect = isObject(view.source) ? view.source.dialect : null;
  if (dialect !== "mcp_elicitation" || !isObject(question) || !Array.isArray(question.requests)) {
    return null;
  }
  return question.requests.filter(isObject);
}

// What a round asks, as Markdown: each server message and, for a URL request, its link written out as its own
// label, so the person sees where it leads. Nothing else: no schema, no secret.
export function elicitationText(requests) {
  return requests
    .map(function (request) {
      var message = String(request.message || "");
      var url = request.mode === "url" && typeof request.url === "string" ? request.url : "";
      // Only a web address is made a link (shared.js's markdown links nothing else either).
      var link = /^https?:\/\//i.test(url) ? "[" + url + "](" + url + ")" : url ? "`" + url + "`" : "";
      return link ? message + "\n\n" + link : message;
    })
    .join("\n\n");
}

// The question in one line of at most 140 characters: the list's link, the page's heading.
export function summary(view) {
  var asks = elicitationOf(view);
  if (asks && asks.length === 1) {
    return clip(String(asks[0].message || "An MCP server asks").split("\n")[0], 140);
  }
  if (asks) {
    return clip((view.question.tool_name || "An MCP tool") + " asks " + asks.length + " things", 140);
  }
  var review = reviewOf(view);
  if (review && review.length === 1) {
    return clip("Review " + callText(review[0].name, review[0].args), 140);
  }
  if (review) {
    var names = review.map(function (request) {
      return request.name;
    });
    return clip("Review " + review.length + " tool calls: " + names.join(", "), 140);
  }
  var call = callOf(view);
  if (call) {
    return clip(callText(call.name, call.args), 140);
  }
  var question = view.question;
  if (typeof question === "string") {
    return clip(question, 140);
  }
  if (isObject(question)) {
    var keys = ["prompt", "message", "description", "question", "summary", "title", "reason"];
    for (var i = 0; i < keys.length; i++) {
      if (typeof question[keys[i]] === "string") {
        return clip(question[keys[i]], 140);
      }
    }
  }
  // An object or a list with no text of its own: its fields are shown one by one below, never as JSON here.
  return isObject(question) || Array.isArray(question) ? "A question" : clip(String(question), 140);
}

// The JSON schema a question carries for its answer, if any: `response_schema` on the question view, or
// `response_schema` / `answer_schema` inside the question itself.
export function schemaOf(view) {
  var question = view.question;
  var inside = isObject(question) ? question : {};
  var found = [view.response_schema, inside.response_schema, inside.answer_schema];
  for (var i = 0; i < found.length; i++) {
    if (isObject(found[i]) && isObject(found[i].properties)) {
      return found[i];
    }
  }
  return null;
}

// What an answer chose, in a word or two: its action, or a batched review's decisions.
function chosen(answer) {
  if (isObject(answer) && typeof answer.action === "string") {
    return answer.action;
  }
  if (isObject(answer) && Array.isArray(answer.decisions)) {
    return answer.decisions
      .map(function (decision) {
        return isObject(decision) ? String(decision.type) : "?";
      })
      .join(", ");
  }
  return "";
}

// -- how it was decided -------------------------------------------------------------------------------

export function outcomeText(view) {
  var outcome = view.outcome;
  if (!outcome) {
    return "";
  }
  if (outcome.expired) {
    return "Nobody answered in time: the default applied.";
  }
  if (outcome.status === "withdrawn") {
    return "This question was withdrawn: the agent moved on without an answer.";
  }
  if (outcome.status === "cancelled") {
    if (!outcome.reason) {
      return "Cancelled by " + who(outcome) + " at " + when(outcome.decided_at) + ".";
    }
    var end = /[.!?]$/.test(outcome.reason) ? "" : ".";
    return "Cancelled by " + who(outcome) + " at " + when(outcome.decided_at) + ": “" + outcome.reason + end + "”";
  }
  var text = "Answered";
  if (outcome.answered_by) {
    text += " by " + who(outcome);
  }
  if (chosen(outcome.answer)) {
    text += " (" + chosen(outcome.answer) + ")";
  }
  if (outcome.decided_at) {
    text += " at " + when(outcome.decided_at);
  }
  return text + ".";
}

export function outcomeLine(view) {
  var outcome = view.outcome;
  if (!outcome) {
    return view.status === "failed" ? "the agent failed" : "";
  }
  // In the words of the outcome (answered, expired, cancelled, withdrawn): a cancel is who cancelled it and why,
  // never the answer the agent got for it, which would read as a decision of theirs.
  if (outcome.status === "withdrawn") {
    return "withdrawn: the agent moved on";
  }
  if (outcome.status === "cancelled") {
    return "cancelled by " + who(outcome) + (outcome.reason ? ": " + outcome.reason : "");
  }
  var action = chosen(outcome.answer);
  if (outcome.expired) {
    return "expired: the default applied" + (action ? " (" + action + ")" : "");
  }
  return [action, outcome.answered_by ? who(outcome) : ""].filter(Boolean).join(" · ");
}

// -- votes (a quorum question), who may answer, and what a cancel gives -------------------------------

// A quorum question counts votes: the API gives `votes`, `approvals`, `needed` and `remaining`.
export function isVoting(view) {
  return Boolean(view) && Array.isArray(view.votes) && typeof view.remaining === "number";
}

export function stillNeeded(view) {
  return plural(view.remaining, "more approval") + " needed";
}

// The list's line for an open question: its votes so far, and whether it was escalated.
export function progressLine(view) {
  var parts = [];
  if (isVoting(view)) {
    parts.push(view.approvals + " of " + view.needed + " approvals");
  }
  if (isObject(view.escalation) && view.escalation.level > 0) {
    parts.push("escalated");
  }
  return parts.join(" · ");
}

export function tagText(tags) {
  var parts = Object.keys(tags || {}).map(function (key) {
    return key + ": " + tags[key];
  });
  return parts.join(", ") || "none";
}

export function audience(answerers) {
  if (!isObject(answerers)) {
    return "anyone signed in";
  }
  var who = [];
  if (answerers.groups && answerers.groups.length) {
    who.push("members of " + answerers.groups.join(", "));
  }
  if (answerers.principals && answerers.principals.length) {
    who.push("the principals " + answerers.principals.join(", "));
  }
  return who.length ? who.join(" or ") : "nobody";
}

export function escalationText(view) {
  var escalation = view.escalation;
  var steps = (view.policy && view.policy.rules && view.policy.rules.escalation) || [];
  var text = "Not escalated yet.";
  if (escalation.level > 0) {
    var step = "Escalated, step " + escalation.level + " of " + escalation.steps;
    text = step + ": routed to " + tagText(escalation.tags) + ".";
  }
  var next = isObject(steps[escalation.level]) ? steps[escalation.level] : null;
  if (escalation.next_at && next) {
    var adds = (next.answerer_groups || []).concat(next.answerer_principals || []);
    text += " At " + when(escalation.next_at) + " it escalates";
    if (isObject(next.tags) && Object.keys(next.tags).length) {
      text += " to " + tagText(next.tags);
    }
    if (adds.length) {
      text += ", and " + adds.join(", ") + (next.replace_answerers ? " take over" : " may answer too");
    }
    text += ".";
  }
  return text;
}

// "If cancelled": what the agent receives when a person cancels the question: the policy's `on_cancel`, else a
// cancellation carrying the reason (`{"action": "cancelled", ...}`), never the default (which may approve).
export function cancelText(policy) {
  var rules = policy.rules || {};
  if (rules.on_cancel !== undefined && rules.on_cancel !== null) {
    return answerText(rules.on_cancel);
  }
  return "a cancellation with your reason, never the default";
}

function answerText(value) {
  if (value === undefined || value === null) {
    return "nothing (the agent is told nobody answered)";
  }
  return isObject(value) && typeof value.action === "string" ? answerLine(value) : JSON.stringify(value);
}
