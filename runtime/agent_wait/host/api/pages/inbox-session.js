// Signing in and out: the API's OIDC issuer (the authorization code flow with PKCE), the local emulator's dev
// sign-in, or a pasted bearer token. The token lives in this tab's session storage only; the API's requests
// carry it (inbox-api.js).

import { base64url, fetchJson, hasToken, randomText, ROOT, setToken } from "./inbox-api.js";
import { byId, isObject, say, show } from "./shared.js";

var store = window.sessionStorage;
var TOKEN_KEY = "agent-wait.inbox.token";
var PKCE_KEY = "agent-wait.inbox.pkce";
var config = null; // how this API signs people in: its `inbox/config.json`
var signedOut = []; // what stops when the person signs out

// `stop` runs whenever the person signs out (or their sign-in expires): the question view stops polling.
export function whenSignedOut(stop) {
  signedOut.push(stop);
}

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
  setToken(value);
  store.setItem(TOKEN_KEY, value);
  var name = claims.email || claims["cognito:username"] || claims.username || claims.sub || "signed in";
  var groups = claims["cognito:groups"] || claims.groups;
  byId("who").textContent = name + (Array.isArray(groups) && groups.length ? " (" + groups.join(", ") + ")" : "");
  show("who", true);
  show("sign-out", true);
  return true;
}

export function signOut(message) {
  setToken(null);
  store.removeItem(TOKEN_KEY);
  signedOut.forEach(function (stop) {
    stop();
  });
  show("who", false);
  show("sign-out", false);
  showSignIn(message || "Signed out.");
}

export function showSignIn(message) {
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

// The local emulator's sign-in (`agent-wait dev`): its issuer signs a token for the user and groups picked;
// `then` runs once signed in.
export function devSignIn(event, then) {
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
      then();
    },
    function () {
      say("Could not reach the local sign-in. Is agent-wait dev still running?", true);
    },
  );
}

// A bearer token pasted in (an API with no sign-in settings); `then` runs once signed in.
export function tokenSignIn(event, then) {
  event.preventDefault();
  var value = String(byId("token-value").value || "")
    .trim()
    .replace(/^Bearer\s+/i, "");
  if (!useToken(value)) {
    say("That token has expired. Get a new one from the issuer.", true);
    return;
  }
  byId("token-value").value = "";
  then();
}

function callbackUrl() {
  return location.origin + location.pathname;
}

// The authorization code flow with PKCE (RFC 7636): the verifier stays in this tab's session storage,
// only its SHA-256 goes to the issuer; the code comes back in the query string and is exchanged once.
export function startOidc() {
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

// How this API signs people in (its `config.json`), then who is signed in: the issuer's reply to a sign-in
// just made, else the token this tab kept. Resolves to what went wrong, or "" when nothing did.
export function resumeSignIn() {
  return fetchJson(ROOT + "/inbox/config.json", {})
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
      if (!hasToken() && saved && !useToken(saved)) {
        store.removeItem(TOKEN_KEY);
        return problem || "Your sign-in has expired. Sign in again.";
      }
      return problem;
    });
}
