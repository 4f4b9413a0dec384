// Sending what the answer card holds: an answer (POST /questions/{id}/answer) or a batched review's decisions,
// each with an Idempotency-Key kept per body, so a retry after a lost connection repeats and never decides
// twice; then the page says what the API did with it.

import { randomText, REASONS, refused, request, THREAD_REASONS } from "./inbox-api.js";
import { readField } from "./inbox-fields.js";
import { edits, reviewAnswer } from "./inbox-forms.js";
import { confirmAnswer } from "./inbox-passkey.js";
import { renderQuestion, shownQuestion } from "./inbox-question.js";
import { answerIsSchema, approving, outcomeText, stillNeeded } from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { byId, isObject, say } from "./shared.js";

// A press of one of the answer card's buttons (inbox-forms.js draws them): the review's send button sends
// every decision, any other answers with the action it names.
export function actionPressed(event) {
  var button = event.target.closest("#actions button");
  if (!button || !button.hasAttribute("data-action")) {
    return; // "Approve and allow…" opens the grant form (inbox-grant-box.js)
  }
  if (button.id === "send-decisions") {
    sendReview();
  } else {
    sendAnswer(button.getAttribute("data-action"));
  }
}

// Answer with `action`, carrying the schema form's values, the edited arguments and the note.
function sendAnswer(action) {
  var watching = shownQuestion();
  var wholeSchema = answerIsSchema(watching.view);
  var properties = wholeSchema ? watching.view.response_schema.properties : {};
  // A schema's own answer holds only what the schema names; any other answer carries our action.
  var body = !wholeSchema || isObject(properties.action) ? { action: action } : {};
  try {
    watching.schemaFields.forEach(function (field) {
      var value = readField(field);
      if (value !== undefined) {
        body[field.name] = value;
      }
    });
    // Edited arguments ride with the approving action, or with an action named `edit` (Agent Inbox, LangChain).
    var allowed = (watching.view.policy && watching.view.policy.allowed_actions) || [];
    if (action === approving(allowed) || action === "edit") {
      var changed = edits(watching);
      if (changed) {
        body.args = changed;
      }
    }
  } catch (error) {
    say(error.message, true);
    return;
  }
  var note = String(byId("note").value || "").trim();
  if (note && (!wholeSchema || isObject(properties.note))) {
    body.note = note;
  }
  submit(body, "your answer “" + action + "” is", action);
}

// Send a batched review's decisions, one per call, together.
function sendReview() {
  var body;
  try {
    body = reviewAnswer(shownQuestion());
  } catch (error) {
    say(error.message, true);
    return;
  }
  var count = body.decisions.length;
  submit(body, count === 1 ? "your decision is" : "your " + count + " decisions are", "decisions");
}

// Send one answer, confirmed with the person's passkey first when the question needs one (inbox-passkey.js);
// `said` names it in what the page then says ("your answer “approve” is").
function submit(body, said, action) {
  var watching = shownQuestion();
  confirmAnswer(watching, body).then(
    function (passkey) {
      if (shownQuestion() === watching) {
        send(passkey ? { answer: body, passkey: passkey } : { answer: body }, said, action);
      }
    },
    function (error) {
      say(error.message, true);
    },
  );
}

function send(sent, said, action) {
  var lost = "Could not reach the API; your answer may not have been sent. Press the button again.";
  post("answer", sent, "Sending your answer…", function (reply, data) {
    if (reply.status === 202) {
      // A vote on a quorum question: recorded; the question waits for more approvals.
      renderQuestion(data);
      say("Your vote “" + action + "” is recorded; " + stillNeeded(data) + ".", true);
    } else if (reply.status === 409 && data.reason === "already_voted" && isObject(data.question)) {
      renderQuestion(data.question);
      say("Not recorded: " + REASONS.already_voted, true);
    } else if (reply.status === 409 && THREAD_REASONS.indexOf(data.reason) >= 0 && isObject(data.question)) {
      renderQuestion(data.question);
      say("Not recorded: " + REASONS[data.reason], true);
    } else if (reply.status === 200) {
      renderQuestion(data);
      var repeated = said.charAt(0).toUpperCase() + said.slice(1).replace(/ is$/, " was").replace(/ are$/, " were");
      say(
        data.result === "repeated"
          ? repeated + " already recorded; nothing changed."
          : "Done: " + said + " recorded, and the agent carries on.",
        true,
      );
    } else if ((reply.status === 409 || reply.status === 410) && isObject(data.question)) {
      renderQuestion(data.question);
      say("Not recorded: " + outcomeText(data.question), true);
    } else if (reply.status === 401) {
      signOut("Your sign-in has expired. Sign in again, then answer.");
    } else {
      say(refused(reply), true);
    }
  }, lost);
}

// POST `body` to the shown question's `route` (`answer`, `cancel`). The same body sent again (after a lost
// connection) carries the same Idempotency-Key: it repeats, never decides twice. `handle(reply, data)` runs
// only if the page still shows that question; `lost` is said when the API cannot be reached.
export function post(route, body, sending, handle, lost) {
  var watching = shownQuestion();
  var keyed = Object.assign({}, body);
  delete keyed.passkey; // a new signature for the same answer is the same answer: it repeats, never decides twice
  var text = route + "\u0000" + JSON.stringify(keyed);
  var key = watching.keys[text] || (watching.keys[text] = randomText(18));
  busy(true);
  say(sending);
  request("/questions/" + encodeURIComponent(watching.id) + "/" + route, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(body),
  }).then(
    function (reply) {
      if (shownQuestion() !== watching) {
        return;
      }
      busy(false);
      handle(reply, reply.data || {});
    },
    function () {
      busy(false);
      say(lost, true);
    },
  );
}

// While a POST is on its way, its buttons are off and the question is not polled.
function busy(on) {
  var buttons = document.querySelectorAll("#actions button, #cancel-send");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].disabled = on;
  }
  var shown = shownQuestion();
  if (shown) {
    shown.busy = on;
  }
}
