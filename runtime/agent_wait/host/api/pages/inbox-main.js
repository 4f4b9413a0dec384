// The approvals inbox, as plain ES modules the browser loads as they are (no build step, no library); this one
// starts the page and routes between its views. It signs in (inbox-session.js: the API's OIDC issuer with PKCE,
// the local dev sign-in, or a pasted token), lists questions from GET /questions (inbox-list.js), shows one from
// GET /questions/{id} (inbox-question.js, inbox-facts.js) and answers it with POST /questions/{id}/answer
// (inbox-forms.js, inbox-answer.js); an operator approves several open questions at once (POST
// /questions/answers, after a confirmation naming each), cancels one with a reason and moves a deadline
// (inbox-operators.js); #/insights draws GET /insights (insights.js). Where a policy allows standing grants, the
// "Approve and allow…" form approves and grants (inbox-grant-form.js, inbox-grant-box.js: presets, a suggestion and
// a dry run), and #/grants lists grants and revokes them (inbox-grants-page.js). Question content is the agent's data:
// every value is put on the page with textContent or as a form value, never parsed as HTML (the page's
// Content-Security-Policy requires Trusted Types with no policy, so an HTML sink would throw).

import { hasToken } from "./inbox-api.js";
import { actionPressed } from "./inbox-answer.js";
import { relabel } from "./inbox-forms.js";
import { clearDryRun, dryRun, renderGrantBox, toggleGrantBox } from "./inbox-grant-box.js";
import { sendGrant } from "./inbox-grant-form.js";
import { showGrants, toggleEnded } from "./inbox-grants-page.js";
import { list, loadList, selectAll } from "./inbox-list.js";
import { cancelQuestion, confirmBulk, extendDeadline, sendBulk } from "./inbox-operators.js";
import { startApp } from "./inbox-push.js";
import { afterRender, openQuestion, shownQuestion, stopPolling } from "./inbox-question.js";
import { tick } from "./inbox-reading.js";
import {
  devSignIn,
  resumeSignIn,
  showSignIn,
  signOut,
  startOidc,
  tokenSignIn,
  whenSignedOut,
} from "./inbox-session.js";
import { showInsights } from "./insights.js";
import { byId, show } from "./shared.js";

// Show the view the address's fragment names: a question, the insights, or the list with its filters.
function route() {
  if (!hasToken()) {
    showSignIn();
    return;
  }
  show("sign-in", false);
  var hash = location.hash || "#/";
  var found = /^#\/questions\/([^?]+)$/.exec(hash);
  show("insights-view", false);
  show("grants-view", false);
  if (found) {
    openQuestion(decodeURIComponent(found[1]));
    return;
  }
  stopPolling();
  if (/^#\/insights(\?|$)/.test(hash)) {
    show("list-view", false);
    show("detail-view", false);
    show("insights-view", true);
    showInsights(new URLSearchParams(hash.split("?")[1] || ""));
    return;
  }
  if (/^#\/grants(\?|$)/.test(hash)) {
    show("list-view", false);
    show("detail-view", false);
    show("grants-view", true);
    showGrants(new URLSearchParams(hash.split("?")[1] || ""));
    return;
  }
  var query = new URLSearchParams(hash.split("?")[1] || "");
  list.status = query.get("status") || "open";
  list.tag = query.get("tag") || "";
  // A field the person is typing in keeps what they typed: this route may finish after their next keystroke.
  setUnlessFocused(byId("filter-status"), list.status);
  setUnlessFocused(byId("filter-tag"), list.tag);
  show("detail-view", false);
  show("list-view", true);
  loadList(false);
}

function setUnlessFocused(field, value) {
  if (document.activeElement !== field) {
    field.value = value;
  }
}

function applyFilters(event) {
  event.preventDefault();
  var query = new URLSearchParams();
  query.set("status", byId("filter-status").value);
  var tag = String(byId("filter-tag").value || "").trim();
  if (tag) {
    query.set("tag", tag);
  }
  var next = "#/?" + query.toString();
  if (location.hash === next) {
    route();
  } else {
    location.hash = next;
  }
}

function relabelShown() {
  relabel(shownQuestion());
}

function start() {
  byId("sign-in-dev").addEventListener("submit", function (event) {
    devSignIn(event, route);
  });
  byId("sign-in-token").addEventListener("submit", function (event) {
    tokenSignIn(event, route);
  });
  byId("oidc-start").addEventListener("click", startOidc);
  byId("sign-out").addEventListener("click", function () {
    signOut();
  });
  whenSignedOut(stopPolling);
  byId("filters").addEventListener("submit", applyFilters);
  byId("extend-form").addEventListener("submit", function (event) {
    event.preventDefault();
    extendDeadline(byId("extend-by").value);
  });
  byId("more").addEventListener("click", function () {
    loadList(true);
  });
  byId("review-form").addEventListener("submit", function (event) {
    event.preventDefault();
  });
  byId("schema-form").addEventListener("submit", function (event) {
    event.preventDefault();
  });
  byId("select-all").addEventListener("change", selectAll);
  byId("bulk-approve").addEventListener("click", confirmBulk);
  byId("bulk-confirm-no").addEventListener("click", function () {
    show("bulk-confirm", false);
    byId("bulk-approve").focus();
  });
  byId("bulk-confirm-yes").addEventListener("click", sendBulk);
  byId("actions").addEventListener("click", actionPressed);
  byId("actions").addEventListener("click", toggleGrantBox);
  afterRender(renderGrantBox);
  byId("grant-form").addEventListener("submit", sendGrant);
  byId("grant-form").addEventListener("change", clearDryRun);
  byId("grant-form").addEventListener("input", clearDryRun);
  byId("grant-dry-run").addEventListener("click", dryRun);
  byId("grants-ended").addEventListener("change", toggleEnded);
  byId("cancel-send").addEventListener("click", cancelQuestion);
  byId("args-rows").addEventListener("input", relabelShown);
  byId("args-rows").addEventListener("change", relabelShown);
  window.addEventListener("hashchange", route);
  setInterval(tick, 1000);
  startApp(); // the installable app: its service worker, and "Notify me on this device" once signed in

  resumeSignIn().then(function (problem) {
    if (problem) {
      showSignIn(problem);
      return;
    }
    route();
  });
}

start();
