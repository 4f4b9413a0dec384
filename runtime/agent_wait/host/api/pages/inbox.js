// The approvals inbox. Plain script, no build step, no library. It signs in (the API's OIDC issuer with
// PKCE, the local dev sign-in, or a pasted token), lists questions from GET /questions, shows one from
// GET /questions/{id} and answers it with POST /questions/{id}/answer; an operator approves several open questions
// at once (POST /questions/answers, after a confirmation naming each) and cancels one with a reason
// (POST /questions/{id}/cancel). Question content is the agent's
// data: every value is put on the page with textContent or as a form value, never parsed as HTML (the
// page's Content-Security-Policy requires Trusted Types with no policy, so an HTML sink would throw).
"use strict";
(function () {
  var store = window.sessionStorage;
  var TOKEN_KEY = "agent-wait.inbox.token";
  var PKCE_KEY = "agent-wait.inbox.pkce";
  var POLL_MS = 2000;
  var BULK_MAX = 25; // the most answers POST /questions/answers takes at once
  var DECIDED = ["answered", "expired", "cancelled"];
  var VIA = {
    api: "the inbox or the answer API",
    link: "a signed link",
    queue: "the entry queue",
    deadline: "the deadline",
  };
  var REASONS = {
    already_decided: "Someone else answered first.",
    expired: "The deadline passed and the default applied.",
    cancelled: "This question was withdrawn.",
    answerer_not_allowed: "You are not one of the people who may answer this question.",
    action_not_allowed: "This question does not accept that answer.",
    edit_not_allowed: "This question does not accept edited arguments.",
    answer_stale: "The answer arrived too late to be used.",
    unknown_question: "There is no such question.",
    already_voted: "You voted already; a second vote changes nothing.",
    not_trusted: "This answer does not say who you are, and this question counts people.",
    thread_failed: "The agent failed on this thread; nothing can be decided there until an operator retries it.",
    thread_busy: "The agent is working on this thread right now; try again in a few seconds.",
    not_parked: "The agent is no longer waiting on this question; no answer can reach it.",
    extend_not_allowed: "You are not one of the people who may extend this question's deadline.",
    beyond_maximum: "That is further than this question's policy lets its deadline move.",
    deadline_passed: "The deadline passed already; the default applies.",
  };
  // Refusals about the thread, not the question: the question is still open, and the page says why instead.
  var THREAD_REASONS = ["thread_failed", "thread_busy", "not_parked"];

  // The API's root: the page is <root>/inbox, under whatever stage or base path the API is served from.
  var ROOT = location.pathname.replace(/\/inbox\/?$/, "");
  var config = null;
  var token = null;
  var list = { status: "open", tag: "", items: [], cursors: {}, generation: 0, selected: {} };
  var current = null; // {id, view, timer, keys}

  // -- small helpers ------------------------------------------------------------------------------------

  function byId(id) {
    return document.getElementById(id);
  }

  var page = window.AgentWaitPage; // shared.js: the time format, Markdown, values and answers as people read them
  var make = page.make;
  var isObject = page.isObject;
  var when = page.when;

  function clear(node) {
    while (node.firstChild) {
      node.removeChild(node.firstChild);
    }
  }

  function show(id, visible) {
    byId(id).hidden = !visible;
  }

  function say(text, focus) {
    var line = byId("status");
    line.textContent = text;
    if (focus) {
      line.focus();
    }
  }

  function pretty(value) {
    return JSON.stringify(value, null, 2);
  }

  function clip(text, length) {
    return text.length > length ? text.slice(0, length - 1) + "…" : text;
  }

  function title(text) {
    var words = String(text).replace(/_/g, " ");
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  // -- time ---------------------------------------------------------------------------------------------

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

  function countdown(node, iso) {
    node.setAttribute("data-expires", iso || "never");
    paint(node);
  }

  function paint(node) {
    var left = timeLeft(node.getAttribute("data-expires"));
    node.textContent = left.text;
    node.classList.toggle("due-soon", left.soon);
  }

  function tick() {
    var nodes = document.querySelectorAll("[data-expires]");
    for (var i = 0; i < nodes.length; i++) {
      paint(nodes[i]);
    }
  }

  // -- what a question says -----------------------------------------------------------------------------

  // The call a question asks about, as {name, args}: a `@wait` call, a LangChain per-call approval, or an
  // Agent Inbox request (alone or in a list of one). Null for anything else.
  function callOf(view) {
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
  function reviewOf(view) {
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
  function who(outcome) {
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
  function approving(allowed) {
    return ["approve", "accept"].filter(function (action) {
      return allowed.indexOf(action) >= 0;
    })[0];
  }

  // A schema the question declares for its whole answer (`response_schema` on the view): the answer is the
  // form's values, with the chosen action only when the schema has an `action` property.
  function answerIsSchema(view) {
    return isObject(view.response_schema) && schemaOf(view) === view.response_schema;
  }

  function summary(view) {
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
      var keys = ["prompt", "message", "description", "question", "title", "reason"];
      for (var i = 0; i < keys.length; i++) {
        if (typeof question[keys[i]] === "string") {
          return clip(question[keys[i]], 140);
        }
      }
    }
    return clip(JSON.stringify(question), 140);
  }

  // The JSON schema a question carries for its answer, if any: `response_schema` on the question view, or
  // `response_schema` / `answer_schema` inside the question itself.
  function schemaOf(view) {
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

  function outcomeText(view) {
    var outcome = view.outcome;
    if (!outcome) {
      return "";
    }
    if (outcome.expired) {
      return "Nobody answered in time: the default applied.";
    }
    if (outcome.status === "cancelled") {
      if (!outcome.reason) {
        return "This question was withdrawn.";
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

  function outcomeLine(view) {
    var outcome = view.outcome;
    if (!outcome) {
      return view.status === "failed" ? "the agent failed" : "";
    }
    var action = chosen(outcome.answer);
    if (outcome.expired) {
      return "expired: the default applied" + (action ? " (" + action + ")" : "");
    }
    return [action, outcome.answered_by ? who(outcome) : ""].filter(Boolean).join(" · ");
  }

  // -- votes (a quorum question) and who may answer -----------------------------------------------------

  // A quorum question counts votes: the API gives `votes`, `approvals`, `needed` and `remaining`.
  function isVoting(view) {
    return Boolean(view) && Array.isArray(view.votes) && typeof view.remaining === "number";
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function stillNeeded(view) {
    return plural(view.remaining, "more approval") + " needed";
  }

  // The list's line for an open question: its votes so far, and whether it was escalated.
  function progressLine(view) {
    var parts = [];
    if (isVoting(view)) {
      parts.push(view.approvals + " of " + view.needed + " approvals");
    }
    if (isObject(view.escalation) && view.escalation.level > 0) {
      parts.push("escalated");
    }
    return parts.join(" · ");
  }

  function tagText(tags) {
    var parts = Object.keys(tags || {}).map(function (key) {
      return key + ": " + tags[key];
    });
    return parts.join(", ") || "none";
  }

  function audience(answerers) {
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

  function escalationText(view) {
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

  // -- the API ------------------------------------------------------------------------------------------

  // {status, data}: the reply's JSON body, or {} when it has none. Never sends cookies or a Referer.
  function fetchJson(url, init) {
    return fetch(url, {
      method: init.method || "GET",
      headers: init.headers || {},
      body: init.body,
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

  function request(path, init) {
    init = init || {};
    var headers = init.headers || {};
    if (token) {
      headers.Authorization = "Bearer " + token;
    }
    return fetchJson(ROOT + path, { method: init.method, headers: headers, body: init.body });
  }

  function refused(reply) {
    var data = reply.data || {};
    var reason = typeof data.reason === "string" ? data.reason : "";
    var detail = typeof data.detail === "string" ? data.detail : "the server answered " + reply.status;
    if (REASONS[reason]) {
      return REASONS[reason] + " (" + detail + ")";
    }
    return "Refused (" + (reason || reply.status) + "): " + detail;
  }

  // -- sign-in ------------------------------------------------------------------------------------------

  function claimsOf(jwt) {
    try {
      var part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      var text = decodeURIComponent(
        Array.prototype.map
          .call(atob(part), function (c) {
            return "%" + ("00" + c.charCodeAt(0).toString(16)).slice(-2);
          })
          .join(""),
      );
      var claims = JSON.parse(text);
      return isObject(claims) ? claims : {};
    } catch (error) {
      return {};
    }
  }

  function useToken(value) {
    var claims = claimsOf(value);
    if (typeof claims.exp === "number" && claims.exp * 1000 <= Date.now()) {
      return false;
    }
    token = value;
    store.setItem(TOKEN_KEY, value);
    var name = claims.email || claims["cognito:username"] || claims.username || claims.sub || "signed in";
    var groups = claims["cognito:groups"] || claims.groups;
    byId("who").textContent = name + (Array.isArray(groups) && groups.length ? " (" + groups.join(", ") + ")" : "");
    show("who", true);
    show("sign-out", true);
    return true;
  }

  function signOut(message) {
    token = null;
    store.removeItem(TOKEN_KEY);
    stopPolling();
    show("who", false);
    show("sign-out", false);
    showSignIn(message || "Signed out.");
  }

  function showSignIn(message) {
    show("list-view", false);
    show("detail-view", false);
    show("sign-in", true);
    var mode = config ? config.sign_in : "token";
    show("sign-in-oidc", mode === "oidc");
    show("sign-in-dev", mode === "dev");
    show("sign-in-token", mode === "token");
    if (mode === "token") {
      byId("token-detail").textContent = (config && config.detail) || "Paste a bearer token from the API's issuer.";
    }
    say(message || "Sign in to see the questions waiting for you.");
  }

  function devSignIn(event) {
    event.preventDefault();
    var user = String(byId("dev-user").value || "").trim();
    var groups = String(byId("dev-groups").value || "")
      .split(/[\s,]+/)
      .filter(Boolean);
    say("Signing in…");
    fetchJson(config.dev_token_url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ user: user, groups: groups }),
    }).then(
      function (reply) {
        if (reply.status !== 200 || typeof reply.data.token !== "string") {
          say("Sign-in refused: " + ((reply.data && reply.data.message) || reply.status), true);
          return;
        }
        useToken(reply.data.token);
        route();
      },
      function () {
        say("Could not reach the local sign-in. Is agent-wait dev still running?", true);
      },
    );
  }

  function tokenSignIn(event) {
    event.preventDefault();
    var value = String(byId("token-value").value || "")
      .trim()
      .replace(/^Bearer\s+/i, "");
    if (!useToken(value)) {
      say("That token has expired. Get a new one from the issuer.", true);
      return;
    }
    byId("token-value").value = "";
    route();
  }

  function base64url(bytes) {
    var text = "";
    for (var i = 0; i < bytes.length; i++) {
      text += String.fromCharCode(bytes[i]);
    }
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function randomText(size) {
    var bytes = new Uint8Array(size);
    crypto.getRandomValues(bytes);
    return base64url(bytes);
  }

  function callbackUrl() {
    return location.origin + location.pathname;
  }

  // The authorization code flow with PKCE (RFC 7636): the verifier stays in this tab's session storage,
  // only its SHA-256 goes to the issuer; the code comes back in the query string and is exchanged once.
  function startOidc() {
    var verifier = randomText(32);
    var state = randomText(16);
    var nonce = randomText(16);
    crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)).then(function (digest) {
      store.setItem(PKCE_KEY, JSON.stringify({ verifier: verifier, state: state, nonce: nonce, hash: location.hash }));
      var url = new URL(config.authorize_url);
      var params = {
        response_type: "code",
        client_id: config.client_id,
        redirect_uri: callbackUrl(),
        scope: config.scopes,
        state: state,
        nonce: nonce,
        code_challenge: base64url(new Uint8Array(digest)),
        code_challenge_method: "S256",
      };
      Object.keys(params).forEach(function (key) {
        url.searchParams.set(key, params[key]);
      });
      location.assign(url.toString());
    });
  }

  function finishOidc(params) {
    var saved = null;
    try {
      saved = JSON.parse(store.getItem(PKCE_KEY) || "null");
    } catch (error) {
      saved = null;
    }
    store.removeItem(PKCE_KEY);
    // The code leaves the address bar (and the history) before anything else happens.
    history.replaceState(null, "", location.pathname + ((saved && saved.hash) || ""));
    if (params.get("error")) {
      return Promise.resolve("Sign-in failed: " + (params.get("error_description") || params.get("error")));
    }
    if (!saved || params.get("state") !== saved.state) {
      return Promise.resolve("Sign-in failed: the issuer's reply does not match this page's request. Sign in again.");
    }
    var body = new URLSearchParams({
      grant_type: "authorization_code",
      code: params.get("code") || "",
      redirect_uri: callbackUrl(),
      client_id: config.client_id,
      code_verifier: saved.verifier,
    });
    return fetchJson(config.token_url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    }).then(
      function (reply) {
        var data = reply.data;
        var value = (data && (data.id_token || data.access_token)) || "";
        if (data && data.id_token && claimsOf(data.id_token).nonce !== saved.nonce) {
          return "Sign-in failed: the issuer's token is not for this sign-in. Sign in again.";
        }
        return value && useToken(value) ? "" : "Sign-in failed: the issuer gave no usable token.";
      },
      function () {
        return "Sign-in failed: could not reach the issuer's token endpoint.";
      },
    );
  }

  // -- routing ------------------------------------------------------------------------------------------

  function route() {
    if (!token) {
      showSignIn();
      return;
    }
    show("sign-in", false);
    var hash = location.hash || "#/";
    var found = /^#\/questions\/([^?]+)$/.exec(hash);
    show("insights-view", false);
    if (found) {
      openQuestion(decodeURIComponent(found[1]));
      return;
    }
    stopPolling();
    if (/^#\/insights(\?|$)/.test(hash)) {
      show("list-view", false);
      show("detail-view", false);
      show("insights-view", true);
      // insights.js: the figures and charts of GET /insights, drawn with this page's own helpers.
      window.AgentWaitInsights.show(new URLSearchParams(hash.split("?")[1] || ""), {
        request: request,
        say: say,
        summary: summary,
        tagText: tagText,
        refused: refused,
        signOut: signOut,
      });
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

  // -- the list -----------------------------------------------------------------------------------------

  // An answered, expired or cancelled question becomes `resumed` once the agent moves on, keeping its outcome:
  // those filters read both statuses and keep the resumed questions with that outcome.
  function sources(status) {
    return DECIDED.indexOf(status) >= 0 ? [status, "resumed"] : [status];
  }
  // (`resumed` itself lists every question the agent moved on from, whatever decided it.)

  function loadList(more) {
    if (!more) {
      list.items = [];
      list.cursors = {};
      list.selected = {};
    }
    var wanted = sources(list.status).filter(function (status) {
      return !more || list.cursors[status];
    });
    // Filters changed while a page was loading: only the newest request may draw the list.
    var generation = ++list.generation;
    say("Loading questions…");
    return Promise.all(
      wanted.map(function (status) {
        var query = new URLSearchParams({ status: status, limit: "100" });
        if (list.tag) {
          query.set("tag", list.tag);
        }
        if (more) {
          query.set("cursor", list.cursors[status]);
        }
        return request("/questions?" + query.toString()).then(function (reply) {
          return { status: status, reply: reply };
        });
      }),
    ).then(
      function (pages) {
        if (generation !== list.generation) {
          return;
        }
        for (var i = 0; i < pages.length; i++) {
          var reply = pages[i].reply;
          if (reply.status === 401) {
            signOut("Your sign-in has expired. Sign in again.");
            return;
          }
          if (reply.status !== 200) {
            say(refused(reply), true);
            return;
          }
          list.cursors[pages[i].status] = reply.data.next || null;
          var keep = reply.data.questions.filter(function (view) {
            return pages[i].status !== "resumed" || list.status === "resumed" || (view.outcome && view.outcome.status === list.status);
          });
          list.items = list.items.concat(keep);
        }
        renderList();
      },
      function () {
        say("Could not reach the API. Check your connection and try again.", true);
      },
    );
  }

  function sortKey(view) {
    var expires = view.policy && view.policy.expires_at;
    var time = expires ? new Date(expires).getTime() : NaN;
    return isNaN(time) ? Infinity : time;
  }

  function renderList() {
    var rows = byId("rows");
    clear(rows);
    var items = list.items.slice().sort(function (a, b) {
      return sortKey(a) - sortKey(b);
    });
    var selecting = list.status === "open";
    byId("questions").classList.toggle("selecting", selecting);
    show("bulk-bar", selecting);
    items.forEach(function (view) {
      var row = make("tr");
      var pick = make("td", "", "pick");
      if (selecting && selectable(view)) {
        var box = make("input");
        box.type = "checkbox";
        box.className = "pick-box";
        box.setAttribute("data-question", view.question_id);
        box.setAttribute("aria-label", "Select " + summary(view) + " on " + view.thread_id);
        box.checked = Boolean(list.selected[view.question_id]);
        box.addEventListener("change", function () {
          select(view, box.checked);
        });
        pick.appendChild(box);
      }
      var left = make("td");
      if (view.status === "open") {
        countdown(left, view.policy.expires_at);
      } else {
        left.textContent = "—";
      }
      var asked = make("td");
      var link = make("a", summary(view), "summary");
      link.setAttribute("href", "#/questions/" + encodeURIComponent(view.question_id));
      asked.appendChild(link);
      var thread = make("td", view.thread_id);
      // The status as the page and the CLI say it (`resumed` once the agent moved on); the line says what decided it.
      var status = make("td");
      status.appendChild(make("span", view.status, "pill " + view.status));
      var line = view.status === "open" ? progressLine(view) : outcomeLine(view);
      if (line) {
        status.appendChild(make("span", line, "outcome-line"));
      }
      [pick, left, asked, thread, status].forEach(function (cell) {
        row.appendChild(cell);
      });
      rows.appendChild(row);
    });
    show("empty", items.length === 0);
    show("more", sources(list.status).some(function (status) {
      return list.cursors[status];
    }));
    renderSelection();
    var label = list.status + (list.tag ? " questions tagged " + list.tag : " questions");
    say(items.length === 1 ? "1 " + label.replace("questions", "question") + "." : items.length + " " + label + ".");
  }

  // -- one question -------------------------------------------------------------------------------------

  function stopPolling() {
    if (current && current.timer) {
      clearInterval(current.timer);
    }
    current = null;
  }

  function openQuestion(id) {
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
              renderAnswer(view);
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

  function renderQuestion(view) {
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
    renderAnswer(view);
    renderHistory(view);
  }

  // A decided question leads with what decided it; the history keeps the whole story.
  function renderOutcome(view) {
    var outcome = view.outcome;
    var failed = view.status === "failed";
    show("outcome-section", Boolean(outcome) || failed);
    var box = byId("outcome");
    clear(box);
    var kind = failed ? "failed" : outcome && outcome.expired ? "expired" : outcome ? outcome.status : "";
    byId("outcome-section").className = "card outcome " + kind;
    if (outcome) {
      box.appendChild(make("p", outcomeText(view)));
      if (outcome.status !== "cancelled") {
        page.answer(box, outcome.answer, reviewOf(view));
      }
      if (outcome.resumed_at) {
        box.appendChild(make("p", "The agent carried on at " + when(outcome.resumed_at) + ".", "muted"));
      }
    }
    if (view.failure) {
      box.appendChild(make("p", "The agent failed while carrying on: " + view.failure.error));
    }
  }

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
      page.markdown(description, call.description);
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
        page.value(byId("question-fields"), shown);
      } else {
        page.markdown(byId("question-fields"), typeof shown === "string" ? shown : JSON.stringify(shown));
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

  // One argument as a row of `rows`: its name and its value, or, given an `id`, a labelled field holding the value.
  // Returns the field ({name, schema, input}) for an editable row, else null.
  function argumentRow(rows, name, value, id) {
    var row = rows.appendChild(make("tr"));
    if (!id) {
      row.appendChild(make("td", name));
      row.appendChild(page.value(make("td"), value));
      return null;
    }
    var label = make("label", name);
    label.setAttribute("for", id);
    row.appendChild(make("td")).appendChild(label);
    var schema = describe(value);
    var input = field(schema, value);
    input.id = id;
    input.name = name;
    row.appendChild(make("td")).appendChild(input);
    return { name: name, schema: schema, input: input, required: false };
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
        page.markdown(block.appendChild(make("div", null, "markdown")), request.description);
      }
      block.appendChild(page.table(request.args));
    });
  }

  // "If nobody answers": the default answer as a person reads it, or what happens without one.
  function renderDefault(policy) {
    var cell = byId("policy-default");
    clear(cell);
    if (!policy.expires_at || policy.expires_at === "never") {
      cell.textContent = "Nothing: the question has no deadline.";
    } else if (policy.default === undefined || policy.default === null) {
      cell.textContent = "No default: at the deadline the agent is told nobody answered.";
    } else if (isObject(policy.default) && typeof policy.default.action === "string") {
      cell.textContent = page.answerLine(policy.default);
    } else {
      page.answer(cell, policy.default);
    }
  }

  // "If cancelled": what the agent receives when a person cancels the question: the policy's `on_cancel`, else a
  // cancellation carrying the reason (`{"action": "cancelled", ...}`), never the default (which may approve).
  function cancelText(policy) {
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
    return isObject(value) && typeof value.action === "string" ? page.answerLine(value) : JSON.stringify(value);
  }

  function renderPolicy(view) {
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

  function renderVotes(view) {
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
      return count + " when the question was withdrawn.";
    }
    if ((view.veto || []).indexOf(action) >= 0) {
      return count + ": a " + action + " decided it.";
    }
    return count + ": the quorum decided it.";
  }

  // -- forms: the arguments to edit, and the answer a JSON schema describes --------------------------------

  function describe(value) {
    if (typeof value === "boolean") {
      return { type: "boolean" };
    }
    if (typeof value === "number") {
      return { type: Number.isInteger(value) ? "integer" : "number" };
    }
    if (typeof value === "string") {
      return { type: "string" };
    }
    return { type: "json" };
  }

  // Text longer than this, or with a line break, gets a box of several lines.
  var LONG_TEXT = 60;

  // The input for one value of a schema, holding `initial`.
  function field(schema, initial) {
    var input;
    if (Array.isArray(schema.enum)) {
      input = make("select");
      schema.enum.forEach(function (choice, position) {
        var option = make("option", typeof choice === "string" ? choice : JSON.stringify(choice));
        option.value = String(position);
        input.appendChild(option);
      });
      var chosen = schema.enum.map(JSON.stringify).indexOf(JSON.stringify(initial));
      input.value = String(chosen >= 0 ? chosen : 0);
    } else if (schema.type === "boolean") {
      input = make("input");
      input.type = "checkbox";
      input.checked = initial === true;
    } else if (schema.type === "integer" || schema.type === "number") {
      input = make("input");
      input.type = "number";
      input.step = schema.type === "integer" ? "1" : "any";
      input.value = typeof initial === "number" ? String(initial) : "";
    } else if (schema.type === "string") {
      var text = typeof initial === "string" ? initial : "";
      var long = text.length > LONG_TEXT || text.indexOf("\n") >= 0 || schema.maxLength > 200;
      input = make(long ? "textarea" : "input");
      if (long) {
        input.rows = Math.min(8, Math.max(3, Math.ceil(text.length / 70) + text.split("\n").length - 1));
      } else {
        input.type = "text";
      }
      input.value = text;
    } else {
      input = make("textarea");
      input.rows = 3;
      input.spellcheck = false;
      input.value = initial === undefined ? "" : pretty(initial);
    }
    return input;
  }

  function addField(container, prefix, index, name, schema, initial, required) {
    var id = prefix + "-" + index;
    var paragraph = make("p", null, "field");
    var label = make("label", schema.title || name);
    label.setAttribute("for", id);
    paragraph.appendChild(label);
    var input = field(schema, initial);
    input.id = id;
    input.name = name;
    if (required) {
      input.required = true;
    }
    paragraph.appendChild(input);
    if (schema.description) {
      var hint = make("small", schema.description, "hint");
      hint.id = id + "-hint";
      input.setAttribute("aria-describedby", hint.id);
      paragraph.appendChild(hint);
    }
    container.appendChild(paragraph);
    return { name: name, schema: schema, input: input, required: required };
  }

  // A field's value, typed as its schema says; throws an Error whose message names the field.
  function readField(field) {
    var schema = field.schema;
    var input = field.input;
    var label = schema.title || field.name;
    if (Array.isArray(schema.enum)) {
      return schema.enum[Number(input.value)];
    }
    if (schema.type === "boolean") {
      return input.checked;
    }
    var text = String(input.value || "").trim();
    if (text === "") {
      if (field.required) {
        throw new Error(label + " is required.");
      }
      return undefined;
    }
    if (schema.type === "integer" || schema.type === "number") {
      var number = Number(text);
      if (!isFinite(number) || (schema.type === "integer" && !Number.isInteger(number))) {
        throw new Error(label + " must be " + (schema.type === "integer" ? "a whole number." : "a number."));
      }
      return number;
    }
    if (schema.type === "string") {
      return text;
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(label + " must be JSON.");
    }
  }

  function renderAnswer(view) {
    // Someone who voted on a quorum question has nothing left to answer: the API refuses a second vote.
    var open = view.status === "open" && !(isVoting(view) && isObject(view.your_vote));
    show("answer-section", open);
    var actions = byId("actions");
    clear(actions);
    clear(byId("schema-fields"));
    clear(byId("review-fields"));
    current.schemaFields = [];
    current.reviews = [];
    show("schema-form", false);
    show("review-form", false);
    byId("cancel-answer").textContent = cancelText(view.policy || {});
    if (!open) {
      return;
    }
    var review = reviewOf(view);
    if (review) {
      renderReview(review);
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
          current.schemaFields.push(added);
        });
      show("schema-form", current.schemaFields.length > 0);
    }
    allowed.forEach(function (action) {
      var button = make("button", title(action));
      button.type = "button";
      button.setAttribute("data-action", action);
      button.addEventListener("click", function () {
        answer(action);
      });
      actions.appendChild(button);
    });
    relabel();
  }

  var DECISION_LABELS = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Respond instead" };

  // A batched review: a card per call with its description, its arguments (fields when it may be edited), a
  // choice of the decisions its tool allows, and a message for the agent; one button sends them all.
  function renderReview(review) {
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
        page.markdown(card.appendChild(make("div", null, "markdown review-description")), request.description);
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
      current.reviews.push(state);
      reviewChanged(state);
    });
    var send = make("button", review.length === 1 ? "Send decision" : "Send " + review.length + " decisions");
    send.type = "button";
    send.setAttribute("data-action", "decisions");
    send.addEventListener("click", sendReview);
    byId("actions").appendChild(send);
  }

  function chosenDecision(state) {
    var picked = state.radios.filter(function (choice) {
      return choice.radio.checked;
    })[0];
    return picked ? picked.radio.value : null;
  }

  // The arguments a person changed on one call, or null when none (throws when one cannot be read).
  function changedArgs(fields, asked) {
    var changed = {};
    var any = false;
    fields.forEach(function (one) {
      var value = readField(one);
      if (value !== undefined && JSON.stringify(value) !== JSON.stringify(asked[one.name])) {
        changed[one.name] = value;
        any = true;
      }
    });
    return any ? changed : null;
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
  function reviewAnswer() {
    return {
      decisions: current.reviews.map(function (state) {
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

  function sendReview() {
    var body;
    try {
      body = reviewAnswer();
    } catch (error) {
      say(error.message, true);
      return;
    }
    var count = body.decisions.length;
    submit(body, count === 1 ? "your decision is" : "your " + count + " decisions are", "decisions");
  }

  // Edited arguments: only those that differ from what was asked, or null when none do.
  function edits() {
    var call = current && current.view ? callOf(current.view) : null;
    if (!call || !current.editFields || !current.editFields.length) {
      return null;
    }
    return changedArgs(current.editFields, call.args);
  }

  function relabel() {
    var allowed = (current && current.view && current.view.policy && current.view.policy.allowed_actions) || [];
    var action = approving(allowed);
    var button = action ? document.querySelector('#actions button[data-action="' + action + '"]') : null;
    if (!button || !current.editFields || !current.editFields.length) {
      return;
    }
    var changed = null;
    try {
      changed = edits();
    } catch (error) {
      changed = null;
    }
    button.textContent = changed ? title(action) + " with edits" : title(action);
  }

  function busy(on) {
    var buttons = document.querySelectorAll("#actions button, #cancel-send");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].disabled = on;
    }
    if (current) {
      current.busy = on;
    }
  }

  function answer(action) {
    var watching = current;
    var wholeSchema = answerIsSchema(watching.view);
    var properties = wholeSchema ? watching.view.response_schema.properties : {};
    // A schema's own answer holds only what the schema names; any other answer carries our action.
    var body = !wholeSchema || isObject(properties.action) ? { action: action } : {};
    try {
      current.schemaFields.forEach(function (field) {
        var value = readField(field);
        if (value !== undefined) {
          body[field.name] = value;
        }
      });
      // Edited arguments ride with the approving action, or with an action named `edit` (Agent Inbox, LangChain).
      var allowed = (watching.view.policy && watching.view.policy.allowed_actions) || [];
      if (action === approving(allowed) || action === "edit") {
        var changed = edits();
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

  // POST `body` to the shown question's `route` (`answer`, `cancel`). The same body sent again (after a lost
  // connection) carries the same Idempotency-Key: it repeats, never decides twice. `handle(reply, data)` runs
  // only if the page still shows that question; `lost` is said when the API cannot be reached.
  function post(route, body, sending, handle, lost) {
    var watching = current;
    var text = route + "\u0000" + JSON.stringify(body);
    var key = watching.keys[text] || (watching.keys[text] = randomText(18));
    busy(true);
    say(sending);
    request("/questions/" + encodeURIComponent(watching.id) + "/" + route, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": key },
      body: JSON.stringify(body),
    }).then(
      function (reply) {
        if (current !== watching) {
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

  function extendDeadline(by) {
    var watching = current;
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
        if (current !== watching) {
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

  // Send one answer; `said` names it in what the page then says ("your answer “approve” is").
  function submit(body, said, action) {
    var lost = "Could not reach the API; your answer may not have been sent. Press the button again.";
    post("answer", { answer: body }, "Sending your answer…", function (reply, data) {
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

  // -- operators: approve several at once, cancel one ----------------------------------------------------

  // A question the list can approve with the others: open, with an approving action, and answered by that action
  // alone (a batched review or a form needs its own page).
  function selectable(view) {
    var allowed = (view.policy && view.policy.allowed_actions) || [];
    return view.status === "open" && Boolean(approving(allowed)) && !reviewOf(view) && !answerIsSchema(view);
  }

  function selectedViews() {
    return list.items.filter(function (view) {
      return list.selected[view.question_id];
    });
  }

  function select(view, on) {
    if (on) {
      list.selected[view.question_id] = true;
    } else {
      delete list.selected[view.question_id];
    }
    show("bulk-confirm", false);
    renderSelection();
  }

  function selectAll() {
    var on = byId("select-all").checked;
    list.selected = {};
    if (on) {
      list.items.filter(selectable).slice(0, BULK_MAX).forEach(function (view) {
        list.selected[view.question_id] = true;
      });
    }
    var boxes = document.querySelectorAll("#rows .pick-box");
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].checked = Boolean(list.selected[boxes[i].getAttribute("data-question")]);
    }
    show("bulk-confirm", false);
    renderSelection();
  }

  // The bar says how many are selected; at BULK_MAX the other boxes are disabled (the API takes that many at once).
  function renderSelection() {
    var count = selectedViews().length;
    var full = count >= BULK_MAX;
    var boxes = document.querySelectorAll("#rows .pick-box");
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].disabled = full && !boxes[i].checked;
    }
    byId("bulk-approve").disabled = count === 0;
    byId("bulk-approve").textContent = count ? "Approve selected (" + count + ")" : "Approve selected";
    byId("bulk-count").textContent = count
      ? plural(count, "question") + " selected" + (full ? " (the most at once)" : "") + "."
      : "Select open questions to approve several at once.";
    var all = list.items.filter(selectable).length;
    byId("select-all").checked = count > 0 && count >= Math.min(all, BULK_MAX);
  }

  // Nothing is sent before the person sees how many, and which: the confirmation names each question.
  function confirmBulk() {
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

  function sendBulk() {
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

  function cancelQuestion() {
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

  function renderHistory(view) {
    var entries = byId("history");
    clear(entries);
    var calls = reviewOf(view);
    var add = function (text, answer, className) {
      var item = make("li", text, className);
      if (answer !== undefined) {
        page.answer(item, answer, calls);
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
      var text = outcome.reason
        ? who(outcome) + " cancelled it at " + when(outcome.decided_at) + ": “" + outcome.reason + "”. The agent got:"
        : "Withdrawn at " + when(outcome.decided_at) + ".";
      add(text, outcome.reason ? outcome.answer : undefined, "decided cancelled");
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

  // -- start --------------------------------------------------------------------------------------------

  function start() {
    byId("sign-in-dev").addEventListener("submit", devSignIn);
    byId("sign-in-token").addEventListener("submit", tokenSignIn);
    byId("oidc-start").addEventListener("click", startOidc);
    byId("sign-out").addEventListener("click", function () {
      signOut();
    });
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
    byId("cancel-send").addEventListener("click", cancelQuestion);
    byId("args-rows").addEventListener("input", relabel);
    byId("args-rows").addEventListener("change", relabel);
    window.addEventListener("hashchange", route);
    setInterval(tick, 1000);

    fetchJson(ROOT + "/inbox/config.json", {})
      .then(
        function (reply) {
          config = reply.status === 200 ? reply.data : { sign_in: "token" };
          var params = new URLSearchParams(location.search);
          if (config.sign_in === "oidc" && (params.get("code") || params.get("error"))) {
            return finishOidc(params);
          }
          return "";
        },
        function () {
          config = { sign_in: "token" };
          return "";
        },
      )
      .then(function (problem) {
        var saved = store.getItem(TOKEN_KEY);
        if (!token && saved && !useToken(saved)) {
          store.removeItem(TOKEN_KEY);
          problem = problem || "Your sign-in has expired. Sign in again.";
        }
        if (problem) {
          showSignIn(problem);
          return;
        }
        route();
      });
  }

  start();
})();
