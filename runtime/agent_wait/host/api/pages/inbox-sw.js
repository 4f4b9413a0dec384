// The inbox's service worker: it makes the inbox an installable app that opens without the network, and turns a
// web push into a notification that opens the question.
//
// - install: keeps the page's shell (the page, its styles, its script modules and icons) in a cache of this version;
// - fetch: the shell comes from the network when it answers (so a deploy shows at once), else from that cache; nothing
//   else passes through here (the API's answers hold question content and are never cached);
// - push: the payload the router or the sweep sent (agent_wait.channels.push.payload: title, body, url, tag), shown
//   as a notification; a reminder replaces the question's earlier one (same tag);
// - notificationclick: opens the question (its url, only ever a page of this inbox), in an open inbox window if there
//   is one.
//
// Registered by inbox-push.js at <root>/inbox/inbox-sw.js with the scope <root>/inbox (the API allows it with
// Service-Worker-Allowed); its own Content-Security-Policy lets it fetch from its origin only.

var VERSION = "agent-wait-inbox-v1";
var BASE = self.location.pathname.replace(/inbox-sw\.js$/, ""); // <root>/inbox/
var PAGE = BASE.replace(/\/$/, ""); // <root>/inbox
var SHELL = [
  PAGE,
  "look.css",
  "inbox.css",
  "shared.js",
  "inbox-main.js",
  "inbox-api.js",
  "inbox-session.js",
  "inbox-reading.js",
  "inbox-list.js",
  "inbox-question.js",
  "inbox-facts.js",
  "inbox-fields.js",
  "inbox-forms.js",
  "inbox-answer.js",
  "inbox-operators.js",
  "insights.js",
  "inbox-grant-words.js",
  "inbox-grant-form.js",
  "inbox-grant-box.js",
  "inbox-grants-page.js",
  "inbox-push.js",
  "inbox-passkey.js",
  "manifest.webmanifest",
  "icon-192.png",
].map(function (name) {
  return name === PAGE ? PAGE : BASE + name;
});

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches
      .open(VERSION)
      .then(function (cache) {
        return cache.addAll(SHELL);
      })
      .then(function () {
        return self.skipWaiting();
      }),
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches
      .keys()
      .then(function (names) {
        return Promise.all(
          names
            .filter(function (name) {
              return name !== VERSION;
            })
            .map(function (name) {
              return caches.delete(name);
            }),
        );
      })
      .then(function () {
        return self.clients.claim();
      }),
  );
});

self.addEventListener("fetch", function (event) {
  var url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin || SHELL.indexOf(url.pathname) < 0) {
    return; // not the shell: the browser fetches it as if there were no worker
  }
  event.respondWith(
    fetch(event.request).catch(function () {
      return caches.match(url.pathname, { cacheName: VERSION });
    }),
  );
});

// A link of this inbox, or the inbox itself: a push never opens another site.
function inboxLink(url) {
  try {
    var found = new URL(url, self.location.href);
    return found.origin === self.location.origin && found.pathname === PAGE ? found.href : PAGE + "#/";
  } catch (error) {
    return PAGE + "#/";
  }
}

self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (error) {
    data = {};
  }
  var title = typeof data.title === "string" && data.title ? data.title : "Your answer is needed";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: typeof data.body === "string" ? data.body : "",
      tag: typeof data.tag === "string" ? data.tag : undefined,
      renotify: typeof data.tag === "string",
      icon: BASE + "icon-192.png",
      badge: BASE + "icon-192.png",
      data: { url: inboxLink(data.url), question_id: data.question_id || null },
    }),
  );
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = inboxLink(event.notification.data && event.notification.data.url);
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (windows) {
      for (var i = 0; i < windows.length; i++) {
        var client = windows[i];
        if (new URL(client.url).pathname === PAGE && "focus" in client) {
          return client.navigate(url).then(function (navigated) {
            return (navigated || client).focus();
          });
        }
      }
      return self.clients.openWindow(url);
    }),
  );
});
