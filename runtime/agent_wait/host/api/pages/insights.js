// The inbox's insights view (#/insights): the figures of GET /insights for the last 7 or 30 days, drawn as
// inline SVG built element by element (no library, no HTML parsing: the page's Content-Security-Policy
// requires Trusted Types with no policy). Colours come from inbox.css classes, never inline styles.

import { refused, request } from "./inbox-api.js";
import { summary, tagText } from "./inbox-reading.js";
import { signOut } from "./inbox-session.js";
import { byId, clear, make, say } from "./shared.js";

var SVG = "http://www.w3.org/2000/svg";
var OUTCOMES = [
  { key: "answered", label: "Answered" },
  { key: "expired", label: "Expired" },
  { key: "cancelled", label: "Cancelled" },
  { key: "withdrawn", label: "Withdrawn" },
];
var state = { days: "7", by: "", generation: 0 };

function svg(tag, attributes, text) {
  var node = document.createElementNS(SVG, tag);
  Object.keys(attributes || {}).forEach(function (name) {
    node.setAttribute(name, String(attributes[name]));
  });
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

// 50 s, 12 min, 3 h 5 min, 2 d 4 h: a duration as people read it.
function duration(seconds) {
  if (seconds === null || seconds === undefined) {
    return "—";
  }
  var s = Math.round(seconds);
  if (s < 60) {
    return s + " s";
  }
  var minutes = Math.round(s / 60);
  if (minutes < 60) {
    return minutes + " min";
  }
  var hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return hours + " h" + (minutes % 60 ? " " + (minutes % 60) + " min" : "");
  }
  var days = Math.floor(hours / 24);
  return days + " d" + (hours % 24 ? " " + (hours % 24) + " h" : "");
}

function figure(label, value, note, className) {
  var box = make("div", null, "figure" + (className ? " " + className : ""));
  box.appendChild(make("span", label, "figure-label"));
  box.appendChild(make("span", String(value), "figure-value"));
  if (note) {
    box.appendChild(make("span", note, "figure-note"));
  }
  return box;
}

function renderFigures(data) {
  var box = byId("insights-figures");
  clear(box);
  var times = data.time_to_answer;
  box.appendChild(figure("Asked", data.asked, "in the last " + data.days + " days"));
  // Grants' decisions are answers nobody was asked: the Answered figure says how many of its own were theirs.
  var granted = data.grants.decided ? data.grants.decided + " by standing grants (" + percent(data.grants.share) + ")" : null;
  box.appendChild(figure("Answered", data.outcomes.answered, granted, "good"));
  box.appendChild(figure("Expired", data.outcomes.expired, "the default applied", "warn"));
  box.appendChild(figure("Cancelled", data.outcomes.cancelled, null, "muted-figure"));
  box.appendChild(figure("Withdrawn", data.outcomes.withdrawn, "the agent moved on", "muted-figure"));
  box.appendChild(figure("Open now", data.open_now, "waiting for an answer"));
  if (data.failed_now) {
    box.appendChild(figure("Failed", data.failed_now, "the agent raised; retry", "bad"));
  }
  var within = times.p90_seconds === null ? "nobody answered" : "9 in 10 within " + duration(times.p90_seconds);
  box.appendChild(figure("Time to answer", duration(times.p50_seconds), "median; " + within, "wide-figure"));
}

// One column per day: asked (thin, left) beside what was decided that day, stacked by outcome.
function renderDaily(data) {
  var box = byId("daily-chart");
  clear(box);
  var days = data.daily;
  var width = 1180;
  var height = 210;
  var left = 28;
  var bottom = 22;
  var top = 8;
  var most = 1;
  days.forEach(function (day) {
    var decided = day.answered + day.expired + day.cancelled + day.withdrawn;
    most = Math.max(most, day.asked, decided);
  });
  var chart = svg("svg", {
    viewBox: "0 0 " + width + " " + height,
    class: "bars",
    role: "img",
    "aria-labelledby": "daily-title",
  });
  chart.appendChild(svg("title", { id: "daily-title" }, "Questions asked and decided per day, last " + data.days + " days"));
  var plot = height - bottom - top;
  [0, 0.5, 1].forEach(function (share) {
    var y = top + plot - plot * share;
    chart.appendChild(svg("line", { x1: left, x2: width, y1: y, y2: y, class: "grid" }));
    chart.appendChild(svg("text", { x: left - 6, y: y + 4, class: "axis", "text-anchor": "end" }, String(Math.round(most * share))));
  });
  var step = (width - left) / days.length;
  var bar = Math.max(2, step * 0.36);
  days.forEach(function (day, index) {
    var x = left + index * step + step * 0.12;
    var asked = (day.asked / most) * plot;
    var rect = svg("rect", { x: x, y: top + plot - asked, width: bar, height: asked, class: "asked" });
    rect.appendChild(svg("title", {}, day.day + ": " + day.asked + " asked"));
    chart.appendChild(rect);
    var y = top + plot;
    OUTCOMES.forEach(function (outcome) {
      var h = (day[outcome.key] / most) * plot;
      if (h > 0) {
        y -= h;
        var part = svg("rect", { x: x + bar + 1, y: y, width: bar, height: h, class: outcome.key });
        part.appendChild(svg("title", {}, day.day + ": " + day[outcome.key] + " " + outcome.key));
        chart.appendChild(part);
      }
    });
    var every = days.length > 10 ? 5 : 1;
    if ((days.length - 1 - index) % every === 0) {
      var label = day.day.slice(5).replace("-", "/");
      chart.appendChild(svg("text", { x: x + bar, y: height - 6, class: "axis", "text-anchor": "middle" }, label));
    }
  });
  box.appendChild(chart);
  var legend = byId("daily-legend");
  clear(legend);
  [{ key: "asked", label: "Asked" }].concat(OUTCOMES).forEach(function (item) {
    var entry = make("span", null, "legend-item");
    entry.appendChild(make("span", null, "swatch " + item.key));
    entry.appendChild(document.createTextNode(item.label));
    legend.appendChild(entry);
  });
}

// Horizontal bars, one row per item: its label, a bar (and a lighter, longer one), its value in words.
function rowsChart(box, title, items, scale) {
  var width = 600;
  var row = 34;
  var labelWidth = 172;
  var height = items.length * row + 4;
  var chart = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "rows", role: "img" });
  chart.appendChild(svg("title", {}, title));
  var span = width - labelWidth - 285;
  items.forEach(function (item, index) {
    var y = index * row + 4;
    var label = item.label.length > 19 ? item.label.slice(0, 18) + "…" : item.label;
    chart.appendChild(svg("text", { x: 0, y: y + 17, class: "row-label" }, label));
    if (item.back) {
      chart.appendChild(svg("rect", { x: labelWidth, y: y + 4, height: 18, width: Math.max(2, (item.back / scale) * span), class: "p90" }));
    }
    chart.appendChild(svg("rect", { x: labelWidth, y: y + 4, height: 18, width: Math.max(2, (item.value / scale) * span), class: "p50" }));
    var end = labelWidth + Math.max(item.value, item.back || 0) / scale * span + 6;
    chart.appendChild(svg("text", { x: end, y: y + 17, class: "row-value" }, item.text));
  });
  box.appendChild(chart);
}

function renderGroups(data) {
  var box = byId("groups-chart");
  clear(box);
  byId("groups-heading").textContent = data.group_by ? "Time to answer by " + data.group_by : "Time to answer";
  var groups = data.groups.filter(function (group) {
    return group.p50_seconds !== null;
  });
  byId("groups-none").hidden = groups.length > 0;
  if (!groups.length) {
    return;
  }
  var scale = Math.max.apply(null, groups.map(function (group) {
    return group.p90_seconds || 1;
  }));
  rowsChart(
    box,
    "Time to answer, p50 and p90, by " + data.group_by,
    groups.map(function (group) {
      return {
        label: group.group,
        value: group.p50_seconds,
        back: group.p90_seconds,
        text: duration(group.p50_seconds) + " · " + duration(group.p90_seconds) + " · " + group.count + " answered",
      };
    }),
    scale,
  );
  var note = make("p", null, "legend");
  [["p50", "median (p50)"], ["p90", "9 in 10 answered within (p90)"]].forEach(function (pair) {
    var entry = make("span", null, "legend-item");
    entry.appendChild(make("span", null, "swatch " + pair[0]));
    entry.appendChild(document.createTextNode(pair[1]));
    note.appendChild(entry);
  });
  box.appendChild(note);
}

function renderAnswerers(data) {
  var box = byId("answerers-chart");
  clear(box);
  var people = data.answerers;
  byId("answerers-none").hidden = people.length > 0;
  if (!people.length) {
    return;
  }
  var scale = Math.max.apply(null, people.map(function (p) {
    return p.decisions + p.votes || 1;
  }));
  rowsChart(
    box,
    "Decisions and votes per person",
    people.map(function (p) {
      var text = p.decisions + (p.decisions === 1 ? " decision" : " decisions");
      if (p.votes) {
        text += ", " + p.votes + (p.votes === 1 ? " vote" : " votes");
      }
      return { label: p.who, value: p.decisions, back: p.decisions + p.votes, text: text };
    }),
    scale,
  );
}

function percent(share) {
  return Math.round(share * 100) + "%";
}

// What share of the period's decisions standing grants made, and each grant the person may see: its function, what
// it allows in words (the API's `pins_text`), who granted it and how many it decided. A grant no longer kept has no
// pins to show: it says so rather than guessing.
function renderGrants(data) {
  var grants = data.grants;
  var rows = byId("grants-rows");
  clear(rows);
  var share = byId("grants-share");
  if (!grants.decided) {
    share.textContent = "No question was decided by a standing grant in this period.";
    share.className = "grants-share muted";
  } else {
    share.textContent = grants.decided + " of " + grants.of + " decisions (" + percent(grants.share) +
      ") were made by standing grants: nobody was asked those.";
    share.className = "grants-share";
  }
  grants.by_grant.forEach(function (grant) {
    var row = make("tr");
    var allows = grant.pins_text === null ? "(no longer kept)" : grant.pins_text || "exactly the call approved";
    if (grant.revoked) {
      allows += " · revoked";
    }
    [
      ["Function", grant.function],
      ["Allows", allows],
      ["Granted by", grant.granted_by || "—"],
      ["Decided", String(grant.decided)],
    ].forEach(function (cell) {
      var td = make("td", cell[1]);
      td.setAttribute("data-label", cell[0]); // a phone shows it before the value (inbox.css)
      row.appendChild(td);
    });
    rows.appendChild(row);
  });
  byId("grants-table").hidden = grants.by_grant.length === 0;
  var hidden = byId("grants-hidden");
  hidden.hidden = !grants.not_shown;
  hidden.textContent = grants.not_shown
    ? grants.not_shown + (grants.not_shown === 1 ? " decision was" : " decisions were") +
      " made by grants you may not see."
    : "";
}

function renderSlowest(data) {
  var rows = byId("slowest-rows");
  clear(rows);
  var now = Date.now();
  data.slowest_open.forEach(function (view) {
    var row = make("tr");
    row.appendChild(make("td", duration((now - Date.parse(view.asked_at)) / 1000)));
    var asked = make("td");
    var link = make("a", summary(view), "summary");
    link.setAttribute("href", "#/questions/" + encodeURIComponent(view.question_id));
    asked.appendChild(link);
    row.appendChild(asked);
    row.appendChild(make("td", view.thread_id));
    row.appendChild(make("td", tagText(view.policy.tags)));
    rows.appendChild(row);
  });
  byId("slowest-none").hidden = data.slowest_open.length > 0;
}

function renderControls(data) {
  ["7", "30"].forEach(function (days) {
    var button = byId("days-" + days);
    button.setAttribute("aria-pressed", String(state.days === days));
  });
  var select = byId("insights-by");
  clear(select);
  var keys = data.tag_keys.slice();
  if (data.group_by && keys.indexOf(data.group_by) < 0) {
    keys.unshift(data.group_by);
  }
  keys.forEach(function (key) {
    var option = make("option", key);
    option.value = key;
    option.selected = key === data.group_by;
    select.appendChild(option);
  });
  select.disabled = keys.length === 0;
  var capped = byId("insights-capped");
  capped.hidden = data.read.capped.length === 0;
  capped.textContent = data.read.capped.length
    ? "Showing the first " + data.read.per_status + " questions of each of these statuses: " +
      data.read.capped.join(", ") + ". The figures leave the rest out."
    : "";
}

function go(days, by) {
  var query = new URLSearchParams();
  query.set("days", days);
  if (by) {
    query.set("by", by);
  }
  location.hash = "#/insights?" + query.toString();
}

var wired = false;

function wire() {
  if (wired) {
    return;
  }
  wired = true;
  ["7", "30"].forEach(function (days) {
    byId("days-" + days).addEventListener("click", function () {
      go(days, state.by);
    });
  });
  byId("insights-by").addEventListener("change", function (event) {
    go(state.days, event.target.value);
  });
  byId("insights-filters").addEventListener("submit", function (event) {
    event.preventDefault();
  });
}

// Show the insights `query` asks for (`days`: 7 or 30; `by`: a tag key to group by).
export function showInsights(query) {
  wire();
  state.days = query.get("days") === "30" ? "30" : "7";
  state.by = query.get("by") || "";
  var generation = ++state.generation;
  say("Loading insights…");
  var path = "/insights?days=" + state.days + (state.by ? "&by=" + encodeURIComponent(state.by) : "");
  return request(path).then(
    function (reply) {
      if (generation !== state.generation) {
        return;
      }
      if (reply.status === 401) {
        signOut("Your sign-in has expired. Sign in again.");
        return;
      }
      if (reply.status !== 200) {
        say(refused(reply), true);
        return;
      }
      var data = reply.data;
      renderControls(data);
      renderFigures(data);
      renderDaily(data);
      renderGroups(data);
      renderAnswerers(data);
      renderGrants(data);
      renderSlowest(data);
      say(
        "Last " + data.days + " days: " + data.asked + " asked, " + data.outcomes.answered + " answered, " +
          data.outcomes.expired + " expired, " + data.outcomes.cancelled + " cancelled, " + data.outcomes.withdrawn +
          " withdrawn; " + data.open_now + " open now" +
          (data.grants.decided ? "; " + data.grants.decided + " decided by standing grants." : "."),
      );
    },
    function () {
      say("Could not reach the answer API.", true);
    },
  );
}
