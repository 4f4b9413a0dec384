// The answer card: a button per allowed answer, the form a response schema describes, the arguments a person
// may edit before approving, and a batched review's cards (LangChain's HumanInTheLoopMiddleware), one
// decision per call. It draws and reads; inbox-answer.js sends.

import { addField, argumentRow, changedArgs } from "./inbox-fields.js";
import { answerIsSchema, approving, callOf, cancelText, isVoting, reviewOf, schemaOf } from "./inbox-reading.js";
import { byId, clear, isObject, make, markdown, show } from "./shared.js";

// An action as a button says it: `request_changes` reads "Request changes".
function title(text) {
  var words = String(text).replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// The answer card of the question shown (`shown`, the question view's record): its buttons, the form its
// schema asks for, or a batched review's cards; the fields it draws are kept on `shown` to be read on sending.
export function renderAnswer(view, shown) {
  // Someone who voted on a quorum question has nothing left to answer: the API refuses a second vote.
  var open = view.status === "open" && !(isVoting(view) && isObject(view.your_vote));
  show("answer-section", open);
  var actions = byId("actions");
  clear(actions);
  clear(byId("schema-fields"));
  clear(byId("review-fields"));
  shown.schemaFields = [];
  shown.reviews = [];
  show("schema-form", false);
  show("review-form", false);
  byId("cancel-answer").textContent = cancelText(view.policy || {});
  if (!open) {
    return;
  }
  var review = reviewOf(view);
  if (review) {
    renderReview(review, shown);
    return;
  }
  var allowed = (view.policy && view.policy.allowed_actions) || [];
  var schema = schemaOf(view);
  show("note-field", !answerIsSchema(view) || isObject(schema.properties.note));
  if (schema) {
    var required = Array.isArray(schema.required) ? schema.required : [];
    var whole = answerIsSchema(view);
    Object.keys(schema.properties)
      .filter(function (name) {
        return name !== "action" && !(whole && name === "note");
      })
      .forEach(function (name, index) {
        var property = isObject(schema.properties[name]) ? schema.properties[name] : {};
        var needed = required.indexOf(name) >= 0;
        var added = addField(byId("schema-fields"), "answer-field", index, name, property, property.default, needed);
        shown.schemaFields.push(added);
      });
    show("schema-form", shown.schemaFields.length > 0);
  }
  allowed.forEach(function (action) {
    var button = make("button", title(action));
    button.type = "button";
    button.setAttribute("data-action", action); // inbox-answer.js sends the answer this names
    actions.appendChild(button);
  });
  relabel(shown);
}

var DECISION_LABELS = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Respond instead" };

// A batched review: a card per call with its description, its arguments (fields when it may be edited), a
// choice of the decisions its tool allows, and a message for the agent; one button sends them all.
function renderReview(review, shown) {
  show("note-field", false);
  show("review-form", true);
  var container = byId("review-fields");
  var count = review.length === 1 ? "One tool call" : review.length + " tool calls";
  container.appendChild(
    make("p", count + " of one model turn wait for your review: decide each, then send your decisions together."),
  );
  review.forEach(function (request, index) {
    var card = container.appendChild(make("fieldset", null, "review"));
    card.appendChild(make("legend", index + 1 + ". " + request.name));
    if (request.description) {
      markdown(card.appendChild(make("div", null, "markdown review-description")), request.description);
    }
    var state = { request: request, fields: [], choice: null, message: null };
    var args = card.appendChild(make("table", null, "review-args"));
    Object.keys(request.args).forEach(function (name, position) {
      var id = request.editable ? "review-" + index + "-arg-" + position : null;
      var edited = argumentRow(args, name, request.args[name], id);
      if (edited) {
        state.fields.push(edited);
      }
    });
    // Approving with changed arguments is the middleware's `edit`: one choice, relabelled as the fields change.
    var choices = request.decisions.filter(function (decision) {
      return !(decision === "edit" && request.decisions.indexOf("approve") >= 0);
    });
    var group = card.appendChild(make("div", null, "choices"));
    group.setAttribute("role", "radiogroup");
    group.setAttribute("aria-label", "Your decision on " + request.name);
    state.radios = choices.map(function (decision, position) {
      var id = "review-" + index + "-decision-" + position;
      var radio = make("input");
      radio.type = "radio";
      radio.name = "review-" + index;
      radio.id = id;
      radio.value = decision;
      radio.checked = position === 0;
      var label = make("label", DECISION_LABELS[decision] || title(decision), "choice");
      label.setAttribute("for", id);
      label.setAttribute("data-decision", decision);
      var wrap = group.appendChild(make("span", null, "choice-wrap"));
      wrap.appendChild(radio);
      wrap.appendChild(label);
      radio.addEventListener("change", function () {
        reviewChanged(state);
      });
      return { radio: radio, label: label };
    });
    var messageId = "review-" + index + "-message";
    var messageField = card.appendChild(make("p", null, "field review-message"));
    var messageLabel = make("label", "Message to the agent");
    messageLabel.setAttribute("for", messageId);
    messageField.appendChild(messageLabel);
    state.message = messageField.appendChild(make("textarea"));
    state.message.id = messageId;
    state.message.rows = 2;
    state.message.maxLength = 1000;
    state.messageField = messageField;
    args.addEventListener("input", function () {
      reviewChanged(state);
    });
    shown.reviews.push(state);
    reviewChanged(state);
  });
  var send = make("button", review.length === 1 ? "Send decision" : "Send " + review.length + " decisions");
  send.type = "button";
  send.id = "send-decisions"; // inbox-answer.js sends every call's decision together
  send.setAttribute("data-action", "decisions");
  byId("actions").appendChild(send);
}

function chosenDecision(state) {
  var picked = state.radios.filter(function (choice) {
    return choice.radio.checked;
  })[0];
  return picked ? picked.radio.value : null;
}

// Changing an argument picks "Approve with edits"; a message is asked for only where it is sent.
function reviewChanged(state) {
  var changed = null;
  try {
    changed = state.fields.length ? changedArgs(state.fields, state.request.args) : null;
  } catch (error) {
    changed = null;
  }
  state.radios.forEach(function (choice) {
    var decision = choice.radio.value;
    if (decision === "approve" && state.request.editable) {
      choice.label.textContent = changed ? "Approve with edits" : "Approve";
    }
  });
  var decision = chosenDecision(state);
  if (changed && document.activeElement && document.activeElement.type !== "radio") {
    var approve = state.radios.filter(function (choice) {
      return choice.radio.value === "approve";
    })[0];
    if (approve) {
      approve.radio.checked = true;
      decision = "approve";
    }
  }
  state.messageField.hidden = decision !== "reject" && decision !== "respond";
  state.message.required = decision === "respond";
}

// One decision per call, in the order the middleware asked: {"decisions": [...]}.
export function reviewAnswer(shown) {
  return {
    decisions: shown.reviews.map(function (state) {
      var decision = chosenDecision(state);
      var name = state.request.name;
      var message = String(state.message.value || "").trim();
      if (decision === "approve" || decision === "edit") {
        var changed = state.fields.length ? changedArgs(state.fields, state.request.args) : null;
        if (changed || decision === "edit") {
          var args = Object.assign({}, state.request.args, changed || {});
          return { type: "edit", edited_action: { name: name, args: args } };
        }
        return { type: "approve" };
      }
      if (decision === "respond" && !message) {
        throw new Error("Write the message the agent gets instead of running " + name + ".");
      }
      var sent = { type: decision };
      if (message) {
        sent.message = message;
      }
      return sent;
    }),
  };
}

// Edited arguments: only those that differ from what was asked, or null when none do.
export function edits(shown) {
  var call = shown && shown.view ? callOf(shown.view) : null;
  if (!call || !shown.editFields || !shown.editFields.length) {
    return null;
  }
  return changedArgs(shown.editFields, call.args);
}

// The approving button says "with edits" while an argument differs from what was asked.
export function relabel(shown) {
  var allowed = (shown && shown.view && shown.view.policy && shown.view.policy.allowed_actions) || [];
  var action = approving(allowed);
  var button = action ? document.querySelector('#actions button[data-action="' + action + '"]') : null;
  if (!button || !shown.editFields || !shown.editFields.length) {
    return;
  }
  var changed = null;
  try {
    changed = edits(shown);
  } catch (error) {
    changed = null;
  }
  button.textContent = changed ? title(action) + " with edits" : title(action);
}
