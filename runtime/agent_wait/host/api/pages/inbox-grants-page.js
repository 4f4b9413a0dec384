// The Grants page (#/grants, #/grants?all=1): the standing grants the signed-in person may see (GET /grants), in
// words — what each allows, where, how many uses are left, until when, who granted it through which door, the
// question it was made on and the questions it decided — and Revoke (DELETE /grants/{id}) after a confirmation.

import { refused, request } from "./inbox-api.js";
import { durationText, reachText, scopeText, viaText } from "./inbox-grant-words.js";
import { signOut } from "./inbox-session.js";
import { byId, clear, make, plural, say, when } from "./shared.js";

var generation = 0; // a later load wins over an earlier one still on its way

export function showGrants(query) {
  var all = query.get("all") === "1";
  byId("grants-ended").checked = all;
  var mine = ++generation;
  say("Loading grants…");
  request("/grants" + (all ? "?all=1" : "")).then(
    function (reply) {
      if (mine !== generation) {
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
      drawGrants(reply.data.grants || [], all);
    },
    function () {
      say("Could not reach the API. Check your connection and reload the page.", true);
    },
  );
}

export function toggleEnded() {
  location.hash = byId("grants-ended").checked ? "#/grants?all=1" : "#/grants";
}

function drawGrants(grants, all) {
  var rows = byId("grant-rows");
  clear(rows);
  grants.forEach(function (grant) {
    rows.appendChild(grantRow(grant));
  });
  byId("grants-empty").hidden = grants.length > 0;
  var live = grants.filter(function (grant) {
    return grant.live;
  }).length;
  say(all ? plural(grants.length, "grant") + ", " + live + " live." : plural(live, "live grant") + ".");
}

// A cell's column name, which a phone shows before its value (inbox.css), where the table's head is hidden.
function labelled(cell, name) {
  cell.setAttribute("data-label", name);
  return cell;
}

function questionLink(id) {
  var link = make("a", id);
  link.href = "#/questions/" + encodeURIComponent(id);
  return link;
}

function grantRow(grant) {
  var row = make("tr");
  row.setAttribute("data-grant", grant.grant_id);
  var what = row.appendChild(make("td"));
  what.appendChild(make("span", grant.function, "grant-function"));
  what.appendChild(make("span", grant.exact ? "exactly the call asked" : reachText(grant.pins, grant.parameters), "grant-reach"));
  what.appendChild(make("span", scopeText(grant.scope, grant.thread_id), "grant-scope muted"));
  var uses = grant.uses === null ? "any number" : grant.uses_left + " of " + grant.uses + " left";
  labelled(row.appendChild(make("td", uses)), "Uses");
  labelled(row.appendChild(make("td", stateText(grant))), "Lives");
  var made = labelled(row.appendChild(make("td")), "Granted");
  made.appendChild(make("span", grant.granted_by + " via " + viaText(grant.via) + ", " + when(grant.granted_at)));
  var on = made.appendChild(make("span", "on ", "grant-on"));
  on.appendChild(questionLink(grant.question_id));
  var decided = labelled(row.appendChild(make("td")), "Decided");
  if (!grant.decided.length) {
    decided.appendChild(make("span", "none yet", "muted"));
  }
  grant.decided.forEach(function (id) {
    decided.appendChild(questionLink(id));
    decided.appendChild(make("br"));
  });
  var act = row.appendChild(make("td", null, "grant-act"));
  if (grant.live) {
    revokeButton(act, grant);
  }
  return row;
}

// "until 7 Dec 2026, 13:00:00 UTC (1 hour)", or why it ended.
function stateText(grant) {
  if (grant.revoked_at) {
    return "revoked by " + (grant.revoked_by || "someone") + ", " + when(grant.revoked_at);
  }
  if (!grant.live && grant.uses_left === 0) {
    return "used up";
  }
  var lived = (new Date(grant.expires_at) - new Date(grant.granted_at)) / 1000;
  return (grant.live ? "until " : "expired ") + when(grant.expires_at) + " (" + durationText(lived) + ")";
}

// Revoke asks first: the button becomes "Revoke this grant?" with Yes and Keep.
function revokeButton(cell, grant) {
  clear(cell);
  var button = cell.appendChild(make("button", "Revoke", "danger"));
  button.type = "button";
  button.addEventListener("click", function () {
    clear(cell);
    cell.appendChild(make("span", "Revoke this grant? Later asks are asked again.", "grant-confirm"));
    var yes = cell.appendChild(make("button", "Yes, revoke", "danger"));
    yes.type = "button";
    var no = cell.appendChild(make("button", "Keep it", "quiet"));
    no.type = "button";
    no.addEventListener("click", function () {
      revokeButton(cell, grant);
    });
    yes.addEventListener("click", function () {
      revoke(cell, grant);
    });
    yes.focus();
  });
}

function revoke(cell, grant) {
  say("Revoking…");
  request("/grants/" + encodeURIComponent(grant.grant_id), { method: "DELETE" }).then(
    function (reply) {
      if (reply.status !== 200) {
        say(refused(reply), true);
        revokeButton(cell, grant);
        return;
      }
      var row = cell.parentNode;
      row.parentNode.replaceChild(grantRow(reply.data), row);
      say("Revoked: " + grant.function + " (" + grant.grant_id + ") decides nothing from now on.", true);
    },
    function () {
      say("Could not reach the API; the grant may not be revoked. Press Revoke again.", true);
      revokeButton(cell, grant);
    },
  );
}
