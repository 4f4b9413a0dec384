// The answer API as the inbox calls it: its root under any stage or base path, JSON requests that carry the
// signed-in person's bearer token and never a cookie or a Referer, and a refusal's reason in words.

export var REASONS = {
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
  passkey_required: "This question needs your answer confirmed with a passkey.",
  passkey_refused: "Your passkey did not confirm this answer.",
};

// Refusals about the thread, not the question: the question is still open, and the page says why instead.
export var THREAD_REASONS = ["thread_failed", "thread_busy", "not_parked"];

// The API's root: the page is <root>/inbox, under whatever stage or base path the API is served from.
export var ROOT = location.pathname.replace(/\/inbox\/?$/, "");

var token = null; // the bearer token of whoever is signed in (inbox-session.js keeps it)

export function hasToken() {
  return Boolean(token);
}

export function setToken(value) {
  token = value;
}

// {status, data}: the reply's JSON body, or {} when it has none. Never sends cookies or a Referer.
export function fetchJson(url, init) {
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

export function request(path, init) {
  init = init || {};
  var headers = init.headers || {};
  if (token) {
    headers.Authorization = "Bearer " + token;
  }
  return fetchJson(ROOT + path, { method: init.method, headers: headers, body: init.body });
}

export function refused(reply) {
  var data = reply.data || {};
  var reason = typeof data.reason === "string" ? data.reason : "";
  var detail = typeof data.detail === "string" ? data.detail : "the server answered " + reply.status;
  if (REASONS[reason]) {
    return REASONS[reason] + " (" + detail + ")";
  }
  return "Refused (" + (reason || reply.status) + "): " + detail;
}

// Bytes as base64url without padding: PKCE's challenge, and random keys.
export function base64url(bytes) {
  var text = "";
  for (var i = 0; i < bytes.length; i++) {
    text += String.fromCharCode(bytes[i]);
  }
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// `size` random bytes as text: PKCE's verifier and state, and each answer's Idempotency-Key.
export function randomText(size) {
  var bytes = new Uint8Array(size);
  crypto.getRandomValues(bytes);
  return base64url(bytes);
}
