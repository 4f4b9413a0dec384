// The inbox as an app on this device: it registers the service worker (inbox-sw.js: the shell offline, pushes shown
// as notifications that open the question), and once someone is signed in it offers "Notify me on this device".
//
// Subscribing is the standard Push API: the browser asks its own push service for a subscription made for this API's
// VAPID public key (GET /push/key), and the page sends that subscription (PushSubscription.toJSON(): its endpoint and
// keys) to POST /push/subscriptions with the person's token; the API keeps it under their person key and this device.
// "Stop notifications" unsubscribes and removes it (DELETE /push/subscriptions/{device}). Each sign-in on a device
// already subscribed sends its subscription again, so the groups kept beside it follow the person's token.
// Nothing here reads a question: it only ever handles keys, a device id and its own words.

import { base64url, hasToken, request, ROOT } from "./inbox-api.js";
import { byId, make } from "./shared.js";

var SCOPE = ROOT + "/inbox";
var WORKER = ROOT + "/inbox/inbox-sw.js";
// The page requires Trusted Types, and register() takes a trusted script URL: the page's one policy (its CSP allows
// this name, once) makes this worker's URL and refuses any other. It makes no HTML and no script.
var workerUrl = window.trustedTypes
  ? window.trustedTypes
      .createPolicy("inbox-worker", {
        createScriptURL: function (url) {
          if (url !== WORKER) {
            throw new TypeError("only the inbox's own service worker may be registered");
          }
          return url;
        },
      })
      .createScriptURL(WORKER)
  : WORKER;
var box = null; // the header's control: a button and a line saying where things stand
var busy = false;

function supported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

// The worker is registered for everyone (the shell offline, installing the app); pushes need a subscription too.
function register() {
  if (!("serviceWorker" in navigator)) {
    return Promise.resolve(null);
  }
  return navigator.serviceWorker.register(workerUrl, { scope: SCOPE, type: "classic" }).catch(function () {
    return null; // no worker (a private window, a policy): the inbox works as a page
  });
}

function keyBytes(text) {
  var padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  var raw = atob(padded);
  var bytes = new Uint8Array(raw.length);
  for (var i = 0; i < raw.length; i++) {
    bytes[i] = raw.charCodeAt(i);
  }
  return bytes;
}

// The device id the API keys this subscription by: SHA-256 of its endpoint, base64url.
function deviceOf(endpoint) {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(endpoint)).then(function (digest) {
    return base64url(new Uint8Array(digest));
  });
}

function state(text, button) {
  box.line.textContent = text;
  box.button.textContent = button || "";
  box.button.hidden = !button;
}

function current() {
  return navigator.serviceWorker.ready.then(function (registration) {
    return registration.pushManager.getSubscription().then(function (subscription) {
      return { registration: registration, subscription: subscription };
    });
  });
}

function send(subscription) {
  return request("/push/subscriptions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(subscription.toJSON()),
  });
}

function subscribe() {
  return Notification.requestPermission()
    .then(function (permission) {
      if (permission !== "granted") {
        throw new Error("notifications are blocked for this site: allow them in the browser's settings");
      }
      return request("/push/key", {});
    })
    .then(function (reply) {
      if (reply.status !== 200 || typeof reply.data.public_key !== "string") {
        throw new Error("this API does not push (" + (reply.data.reason || reply.status) + ")");
      }
      return current().then(function (found) {
        return found.registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(reply.data.public_key),
        });
      });
    })
    .then(send)
    .then(function (reply) {
      if (reply.status !== 201) {
        throw new Error(reply.data.detail || "the API answered " + reply.status);
      }
      state("Notifications on for this device.", "Stop notifications");
    });
}

function unsubscribe() {
  return current().then(function (found) {
    if (!found.subscription) {
      return null;
    }
    var endpoint = found.subscription.endpoint;
    return found.subscription.unsubscribe().then(function () {
      return deviceOf(endpoint).then(function (device) {
        return request("/push/subscriptions/" + encodeURIComponent(device), { method: "DELETE" });
      });
    });
  }).then(function () {
    state("", "Notify me on this device");
  });
}

function pressed() {
  if (busy) {
    return;
  }
  busy = true;
  var on = box.button.textContent === "Stop notifications";
  (on ? unsubscribe() : subscribe())
    .catch(function (error) {
      state("Could not turn notifications " + (on ? "off" : "on") + ": " + error.message, box.button.textContent);
    })
    .then(function () {
      busy = false;
    });
}

// Signed in: offer the control when this API pushes (GET /push/key answers); a device subscribed before sends its
// subscription again (fresh groups).
function signedIn() {
  if (!supported() || !hasToken()) {
    return;
  }
  request("/push/key", {})
    .then(function (reply) {
      if (reply.status !== 200) {
        return null; // push is off on this API (404 push_not_enabled): nothing to offer
      }
      box.root.hidden = false;
      return current();
    })
    .then(function (found) {
      if (found) {
        offer(found);
      }
    });
}

function offer(found) {
  if (!found.subscription) {
    state("", "Notify me on this device");
    return;
  }
  state("Notifications on for this device.", "Stop notifications");
  send(found.subscription);
}

// Registers the service worker and puts the notifications control in the header (inbox-main.js calls it once).
export function startApp() {
  register();
  box = { root: make("span", null, "push-box"), button: make("button"), line: make("span", null, "muted push-line") };
  box.button.type = "button";
  box.button.id = "push-toggle";
  box.button.className = "quiet";
  box.line.id = "push-state";
  box.line.setAttribute("role", "status");
  box.root.hidden = true;
  box.root.appendChild(box.line);
  box.root.appendChild(box.button);
  box.button.addEventListener("click", pressed);
  var who = byId("who");
  who.parentNode.insertBefore(box.root, who);
  // The session shows who is signed in on #who: that is when to offer notifications, and hide them on sign-out.
  new MutationObserver(function () {
    if (who.hidden) {
      box.root.hidden = true;
    } else {
      signedIn();
    }
  }).observe(who, { attributes: true, attributeFilter: ["hidden"] });
  if (!who.hidden) {
    signedIn();
  }
}
