// The list view (#/ and #/?status=...&tag=...): the questions of one status, soonest deadline first, each row
// a link to the question; on the open list, a box per row to approve several at once.

import { refused, request } from "./inbox-api.js";
import { answerIsSchema, approving, countdown, outcomeLine, progressLine, reviewOf, summary } from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { byId, clear, make, plural, say, show } from "./shared.js";

var BULK_MAX = 25; // the most answers POST /questions/answers takes at once
var DECIDED = ["answered", "expired", "cancelled", "withdrawn"];

// What the list shows: its filters (the router sets them), the questions loaded, and which are selected.
export var list = { status: "open", tag: "", items: [], cursors: {}, generation: 0, selected: {} };

// An answered, expired or cancelled question becomes `resumed` (or `failed`) once the agent has it, keeping its
// outcome: those filters read the three statuses and keep the questions with that outcome. A withdrawn question
// (the agent moved on without it) stays `cancelled`, beside the cancels people made.
function sources(status) {
  if (status === "withdrawn") {
    return ["cancelled"];
  }
  return DECIDED.indexOf(status) >= 0 ? [status, "resumed", "failed"] : [status];
}
// (`resumed` itself lists every question the agent moved on from, whatever decided it.)

// The first page of each status the filter reads, or with `more` the next one.
export function loadList(more) {
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
          return DECIDED.indexOf(list.status) < 0 || (view.outcome && view.outcome.status === list.status);
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

// -- choosing several to approve at once (inbox-operators.js sends them) ------------------------------

// A question the list can approve with the others: open, with an approving action, and answered by that action
// alone (a batched review or a form needs its own page).
function selectable(view) {
  var allowed = (view.policy && view.policy.allowed_actions) || [];
  return view.status === "open" && Boolean(approving(allowed)) && !reviewOf(view) && !answerIsSchema(view);
}

export function selectedViews() {
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

export function selectAll() {
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
