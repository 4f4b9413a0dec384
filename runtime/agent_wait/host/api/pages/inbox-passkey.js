// Passkeys (WebAuthn) in the inbox: "Register a passkey" beside the signed-in person's name (POST
// /passkeys/registration/options, navigator.credentials.create, POST /passkeys/registration), and, for a question
// whose policy needs one (`policy.rules.passkey`), the confirmation an answer carries: POST
// /questions/{id}/passkey gives options whose challenge is the answer's digest (its question, arguments, action
// and time: docs/proving.md), navigator.credentials.get signs it, and inbox-answer.js sends the assertion with the
// answer. The page builds its one button and note as elements (no HTML is parsed: Trusted Types).

import { base64url, refused, request } from "./inbox-api.js";
import { afterRender, shownQuestion } from "./inbox-question.js";
import { byId, isObject, make, say, when } from "./shared.js";

var BUTTON_ID = "passkey-register";
var NOTE_ID = "passkey-note";
var PROOF_ID = "passkey-proof";

// base64url text to the bytes WebAuthn's options hold.
function bytesOf(text) {
  var plain = atob(String(text).replace(/-/g, "+").replace(/_/g, "/") + "===".slice((String(text).length + 3) % 4));
  var bytes = new Uint8Array(plain.length);
  for (var i = 0; i < plain.length; i++) {
    bytes[i] = plain.charCodeAt(i);
  }
  return bytes;
}

function text(buffer) {
  return buffer ? base64url(new Uint8Array(buffer)) : null;
}

function descriptors(list) {
  return (list || []).map(function (item) {
    return { type: item.type || "public-key", id: bytesOf(item.id), transports: item.transports };
  });
}

// PublicKeyCredentialCreationOptions from the API's JSON (base64url fields as bytes).
function creationOptions(json) {
  var options = Object.assign({}, json);
  options.challenge = bytesOf(json.challenge);
  options.user = Object.assign({}, json.user, { id: bytesOf(json.user.id) });
  options.excludeCredentials = descriptors(json.excludeCredentials);
  return options;
}

// PublicKeyCredentialRequestOptions from the API's JSON.
function requestOptions(json) {
  var options = Object.assign({}, json);
  options.challenge = bytesOf(json.challenge);
  options.allowCredentials = descriptors(json.allowCredentials);
  return options;
}

function credentialJson(credential, response) {
  return {
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    response: response,
    clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
    authenticatorAttachment: credential.authenticatorAttachment || null,
  };
}

function postJson(path, body) {
  return request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

// Register a new passkey for the signed-in person.
function registerPasskey() {
  if (!window.PublicKeyCredential) {
    say("This browser cannot use passkeys; answer questions that need one on a device that can.", true);
    return;
  }
  say("Asking your device for a new passkey…");
  postJson("/passkeys/registration/options", {})
    .then(function (reply) {
      if (reply.status !== 200) {
        throw new Error(refused(reply));
      }
      return navigator.credentials.create({ publicKey: creationOptions(reply.data) });
    })
    .then(function (credential) {
      var response = {
        clientDataJSON: text(credential.response.clientDataJSON),
        attestationObject: text(credential.response.attestationObject),
        transports: credential.response.getTransports ? credential.response.getTransports() : [],
      };
      return postJson("/passkeys/registration", { credential: credentialJson(credential, response) });
    })
    .then(function (reply) {
      if (reply.status !== 201) {
        throw new Error(refused(reply));
      }
      say("Passkey registered. Questions that need one are confirmed with it when you answer.", true);
    })
    .catch(function (error) {
      say("No passkey was registered: " + error.message, true);
    });
}

// The actions this question's policy confirms with a passkey (none when it needs none).
function passkeyActions(view) {
  var rules = isObject(view) && isObject(view.policy) && isObject(view.policy.rules) ? view.policy.rules : {};
  var rule = isObject(rules.passkey) ? rules.passkey : {};
  return Array.isArray(rule.actions) ? rule.actions : [];
}

function needsPasskey(view, answer) {
  var actions = passkeyActions(view);
  var action = isObject(answer) ? answer.action : undefined;
  return actions.length > 0 && (typeof action !== "string" || actions.indexOf(action) >= 0);
}

// What an answer to the shown question carries beside it: null when it needs no passkey, else {at, credential},
// the person's passkey over the answer's digest. Rejects with a sentence when it cannot be had.
export function confirmAnswer(watching, answer) {
  if (!watching || !needsPasskey(watching.view, answer)) {
    return Promise.resolve(null);
  }
  if (!window.PublicKeyCredential) {
    return Promise.reject(new Error("This question needs a passkey, and this browser cannot use one."));
  }
  say("Confirm your answer with your passkey…");
  var at = null;
  return postJson("/questions/" + encodeURIComponent(watching.id) + "/passkey", { answer: answer })
    .then(function (reply) {
      if (reply.status !== 200) {
        throw new Error(
          reply.data && reply.data.reason === "no_passkey"
            ? "This question needs a passkey: register one (“Register a passkey”, at the top), then answer."
            : refused(reply),
        );
      }
      at = reply.data.at;
      return navigator.credentials.get({ publicKey: requestOptions(reply.data.publicKey) });
    })
    .then(function (credential) {
      var response = {
        clientDataJSON: text(credential.response.clientDataJSON),
        authenticatorData: text(credential.response.authenticatorData),
        signature: text(credential.response.signature),
        userHandle: text(credential.response.userHandle),
      };
      return { at: at, credential: credentialJson(credential, response) };
    })
    .catch(function (error) {
      throw new Error("Not sent: " + (error.name === "NotAllowedError" ? "the passkey was not used." : error.message));
    });
}

// Under the answer buttons of a question that needs a passkey, say so; under its outcome, that a passkey signed it.
function drawNote(view) {
  var note = byId(NOTE_ID);
  if (!note) {
    note = make("p", "", "muted passkey-note");
    note.id = NOTE_ID;
    byId("actions").after(note);
  }
  var actions = passkeyActions(view);
  note.hidden = actions.length === 0 || !shownQuestion() || (view && view.status !== "open");
  note.textContent =
    "Your passkey confirms " +
    (actions.length > 1 ? "your answer" : "“" + actions[0] + "”") +
    ": it signs this question, its arguments, your answer and the time.";
  var signed = isObject(view) && isObject(view.outcome) && isObject(view.outcome.passkey) ? view.outcome.passkey : null;
  var proof = byId(PROOF_ID);
  if (!proof) {
    proof = make("p", "", "muted passkey-proof");
    proof.id = PROOF_ID;
    byId("outcome").after(proof);
  }
  proof.hidden = !signed;
  proof.textContent = signed
    ? "Confirmed with passkey " + signed.credential_id + ", signed at " + when(signed.signed_at) +
      ": the audit export proves it (scripts/verify_decision.py)."
    : "";
}

// "Register a passkey" sits beside the signed-in person's name, shown while they are signed in.
function placeButton() {
  var button = make("button", "Register a passkey", "quiet");
  button.type = "button";
  button.id = BUTTON_ID;
  var who = byId("who");
  button.hidden = who.hidden;
  byId("sign-out").before(button);
  button.addEventListener("click", registerPasskey);
  new MutationObserver(function () {
    button.hidden = who.hidden;
  }).observe(who, { attributes: true, attributeFilter: ["hidden"] });
}

placeButton();
afterRender(drawNote);
