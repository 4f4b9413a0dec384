// What an operator does beyond answering one question: approve several open questions at once (after a
// confirmation naming each), cancel a question with a reason, and move a deadline later.

import { randomText, REASONS, refused, request, THREAD_REASONS } from "./inbox-api.js";
import { post } from "./inbox-answer.js";
import { loadList, selectedViews } from "./inbox-list.js";
import { renderQuestion, shownQuestion } from "./inbox-question.js";
import { approving, outcomeText, summary } from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { byId, clear, isObject, make, plural, say, show, when } from "./shared.js";

// -- approve several at once --------------------------------------------------------------------------

// Nothing is sent before the person sees how many, and which: the confirmation names each question.
export function confirmBulk() {
  var views = selectedViews();
  if (!views.length) {
    return;
  }
  var names = byId("bulk-confirm-list");
  clear(names);
  views.forEach(function (view) {
    var item = make("li");
    item.appendChild(make("span", summary(view), "bulk-summary"));
    item.appendChild(make("span", " · " + view.thread_id, "muted"));
    names.appendChild(item);
  });
  byId("bulk-confirm-heading").textContent = "Approve " + plural(views.length, "question") + "?";
  byId("bulk-confirm-yes").textContent = "Approve " + plural(views.length, "question");
  show("bulk-results", false);
  show("bulk-confirm", true);
  byId("bulk-confirm-yes").focus();
}

// Each selected question's approving action, in one POST /questions/answers.
export function sendBulk() {
  var views = selectedViews();
  var answers = views.map(function (view) {
    return { question_id: view.question_id, answer: { action: approving(view.policy.allowed_actions) } };
  });
  var yes = byId("bulk-confirm-yes");
  yes.disabled = true;
  say("Sending " + plural(answers.length, "approval") + "…");
  request("/questions/answers", {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": randomText(18) },
    body: JSON.stringify({ answers: answers }),
  }).then(
    function (reply) {
      yes.disabled = false;
      show("bulk-confirm", false);
      if (reply.status === 401) {
        signOut("Your sign-in has expired. Sign in again, then approve.");
        return;
      }
      if (reply.status !== 200 || !Array.isArray((reply.data || {}).results)) {
        say(refused(reply), true);
        return;
      }
      var line = renderResults(views, reply.data.results);
      loadList(false).then(function () {
        say(line, true);
      });
    },
    function () {
      yes.disabled = false;
      say("Could not reach the API; some approvals may have been sent. Reload the list to see where each stands.", true);
    },
  );
}

// A line per question: approved, or not and why (the same words the question's own page uses).
function renderResults(views, results) {
  var names = {};
  views.forEach(function (view) {
    names[view.question_id] = summary(view);
  });
  var box = byId("bulk-results-list");
  clear(box);
  var done = 0;
  results.forEach(function (result) {
    var body = result.body || {};
    var ok = result.status === 200 || result.status === 202;
    done += ok ? 1 : 0;
    var item = make("li", "", ok ? "bulk-ok" : "bulk-refused");
    item.appendChild(make("span", ok ? (body.result === "voted" ? "Vote recorded" : "Approved") : "Not approved", "bulk-mark"));
    item.appendChild(make("span", " " + (names[result.question_id] || result.question_id)));
    if (!ok) {
      item.appendChild(make("span", " — " + refused({ status: result.status, data: body }), "bulk-why"));
    }
    box.appendChild(item);
  });
  var line = plural(done, "question") + " approved" + (done < results.length ? "; " + (results.length - done) + " not (see why below)." : ".");
  byId("bulk-results-heading").textContent = line;
  show("bulk-results", true);
  return line;
}

// -- cancel or extend the question shown --------------------------------------------------------------

// Cancel the question shown, with the reason the person gave (POST /questions/{id}/cancel).
export function cancelQuestion() {
  var field = byId("cancel-reason");
  var reason = String(field.value || "").trim();
  if (!reason) {
    say("Say why you cancel it: the reason is recorded with your name.", true);
    field.focus();
    return;
  }
  var lost = "Could not reach the API; the question may not have been cancelled. Press the button again.";
  post("cancel", { reason: reason }, "Cancelling…", function (reply, data) {
    if (reply.status === 200) {
      field.value = "";
      byId("cancel-box").open = false;
      renderQuestion(data);
      say("Cancelled: the agent carries on with the policy's answer for a cancelled question.", true);
    } else if (reply.status === 409 && THREAD_REASONS.indexOf(data.reason) >= 0 && isObject(data.question)) {
      renderQuestion(data.question);
      say("Not cancelled: " + REASONS[data.reason], true);
    } else if ((reply.status === 409 || reply.status === 410) && isObject(data.question)) {
      renderQuestion(data.question);
      say("Not cancelled: " + outcomeText(data.question), true);
    } else if (reply.status === 401) {
      signOut("Your sign-in has expired. Sign in again, then cancel.");
    } else {
      say("Not cancelled: " + refused(reply), true);
    }
  }, lost);
}

// Move the shown question's deadline later `by` an ISO 8601 duration (POST /questions/{id}/extend), as far as
// its policy lets it and only for the people it names.
export function extendDeadline(by) {
  var watching = shownQuestion();
  var button = byId("extend-button");
  button.disabled = true;
  say("Moving the deadline…");
  request("/questions/" + encodeURIComponent(watching.id) + "/extend", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ by: by }),
  }).then(
    function (reply) {
      button.disabled = false;
      if (shownQuestion() !== watching) {
        return;
      }
      var data = reply.data || {};
      if (reply.status === 200) {
        renderQuestion(data);
        say("Deadline moved to " + when(data.policy.expires_at) + "; the reminders moved with it.", true);
      } else if (reply.status === 401) {
        signOut("Your sign-in has expired. Sign in again, then extend.");
      } else {
        if (isObject(data.question)) {
          renderQuestion(data.question);
        }
        say("Not extended: " + refused(reply), true);
      }
    },
    function () {
      button.disabled = false;
      say("Could not reach the API; the deadline may not have moved. Reload the question to see.", true);
    },
  );
}
