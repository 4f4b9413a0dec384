// What the approvals inbox and the signed-link confirmation page share: finding and showing elements, one way
// to write a time, a safe Markdown renderer for descriptions, and how a call's arguments and an answer read.
// Every value is set as text on elements these modules build: nothing from a question is ever parsed as HTML
// (the pages' policy forbids it too, with Trusted Types and no policy).

export function make(tag, text, className) {
  var node = document.createElement(tag);
  if (text !== undefined && text !== null) {
    node.textContent = text;
  }
  if (className) {
    node.className = className;
  }
  return node;
}

export function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// -- elements -----------------------------------------------------------------------------------------

export function byId(id) {
  return document.getElementById(id);
}

export function clear(node) {
  while (node.firstChild) {
    node.removeChild(node.firstChild);
  }
}

export function show(id, visible) {
  byId(id).hidden = !visible;
}

// The page's live status line (`#status`): what just happened, read out by screen readers; `focus` moves
// the keyboard there, for a problem the person must see.
export function say(text, focus) {
  var line = byId("status");
  line.textContent = text;
  if (focus) {
    line.focus();
  }
}

export function plural(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

// -- time: one format on every page -------------------------------------------------------------------

var FORMAT = {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
};

// "4 Dec 2026, 10:41:34 UTC" in the reader's own time zone and language; "never" for no time.
export function when(iso) {
  if (!iso || iso === "never") {
    return "never";
  }
  var moment = new Date(iso);
  if (isNaN(moment.getTime())) {
    return String(iso);
  }
  try {
    return new Intl.DateTimeFormat(undefined, FORMAT).format(moment);
  } catch (error) {
    return moment.toISOString();
  }
}

// -- Markdown, safely ---------------------------------------------------------------------------------

// The subset descriptions use: paragraphs, line breaks, `#` headings, `-`/`*`/`1.` lists, fenced code,
// `code`, **bold**, *emphasis*/_emphasis_ and [links](https://...) (http, https and mailto only; they open
// without a Referer). Anything else stays as the text it is.
export function markdown(container, text) {
  while (container.firstChild) {
    container.removeChild(container.firstChild);
  }
  var lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  var i = 0;
  while (i < lines.length) {
    var line = lines[i];
    if (/^\s*$/.test(line)) {
      i++;
    } else if (/^\s*```/.test(line)) {
      var code = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i])) {
        code.push(lines[i]);
        i++;
      }
      i++;
      container.appendChild(make("pre", code.join("\n")));
    } else if (/^#{1,6}\s/.test(line)) {
      var heading = make("p", null, "md-heading");
      inline(heading, line.replace(/^#{1,6}\s+/, ""));
      container.appendChild(heading);
      i++;
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      var ordered = /^\s*\d/.test(line);
      var list = make(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        var item = make("li");
        inline(item, lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""));
        list.appendChild(item);
        i++;
      }
      container.appendChild(list);
    } else {
      var paragraph = make("p");
      var first = true;
      while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^\s*(```|#{1,6}\s|[-*+]\s|\d+[.)]\s)/.test(lines[i])) {
        if (!first) {
          paragraph.appendChild(make("br"));
        }
        inline(paragraph, lines[i]);
        first = false;
        i++;
      }
      container.appendChild(paragraph);
    }
  }
}

var INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

function inline(parent, text) {
  var rest = text;
  while (rest) {
    var found = INLINE.exec(rest);
    if (!found) {
      parent.appendChild(document.createTextNode(rest));
      return;
    }
    if (found.index > 0) {
      parent.appendChild(document.createTextNode(rest.slice(0, found.index)));
    }
    var token = found[0];
    if (found[1]) {
      parent.appendChild(make("code", token.slice(1, -1)));
    } else if (found[2]) {
      inline(parent.appendChild(make("strong")), token.slice(2, -2));
    } else if (found[3]) {
      inline(parent.appendChild(make("em")), token.slice(1, -1));
    } else {
      var label = token.slice(1, token.indexOf("]("));
      var href = token.slice(token.indexOf("](") + 2, -1);
      if (/^(https?:|mailto:)/i.test(href)) {
        var link = make("a", label);
        link.href = href;
        link.rel = "noopener noreferrer";
        link.target = "_blank";
        parent.appendChild(link);
      } else {
        parent.appendChild(document.createTextNode(token));
      }
    }
    rest = rest.slice(found.index + token.length);
  }
}

// -- values and answers as people read them -----------------------------------------------------------

// One value in a table cell: text as text (its line breaks kept), numbers and booleans as written, and an
// object or a list as a nested table or list rather than JSON.
export function value(cell, shown) {
  if (typeof shown === "string") {
    cell.appendChild(make("span", shown, "text-value"));
  } else if (Array.isArray(shown)) {
    var list = make("ul", null, "value-list");
    shown.forEach(function (item) {
      value(list.appendChild(make("li")), item);
    });
    cell.appendChild(shown.length ? list : make("span", "(none)", "muted"));
  } else if (isObject(shown)) {
    cell.appendChild(table(shown));
  } else {
    cell.appendChild(make("span", JSON.stringify(shown)));
  }
  return cell;
}

// An object's fields as a two-column table: name, value.
export function table(object) {
  var rows = make("table", null, "value-table");
  Object.keys(object).forEach(function (name) {
    var row = rows.appendChild(make("tr"));
    row.appendChild(make("th", name)).setAttribute("scope", "row");
    value(row.appendChild(make("td")), object[name]);
  });
  return rows;
}

function shortValue(shown) {
  return typeof shown === "string" ? shown : JSON.stringify(shown);
}

// A LangChain middleware decision as a sentence: "approved with amount = 650 (edited)", "rejected: “…”".
// `asked` (the call's own arguments) keeps an edit to the arguments it changed.
function decisionText(decision, asked) {
  if (!isObject(decision)) {
    return JSON.stringify(decision);
  }
  var said = typeof decision.message === "string" ? ": “" + decision.message + "”" : "";
  if (decision.type === "edit" && isObject(decision.edited_action)) {
    var args = isObject(decision.edited_action.args) ? decision.edited_action.args : {};
    var changed = Object.keys(args).filter(function (name) {
      return !isObject(asked) || JSON.stringify(args[name]) !== JSON.stringify(asked[name]);
    });
    var values = changed.map(function (name) {
      return name + " = " + shortValue(args[name]);
    });
    return values.length ? "approved with " + values.join(", ") + " (edited)" : "approved (edited, nothing changed)";
  }
  var past = { approve: "approved", reject: "rejected", respond: "answered instead of running" };
  return (past[decision.type] || String(decision.type)) + said;
}

// An answer in one line, for a small cell: "reject (note: “nobody answered in time”)".
export function answerLine(shown) {
  if (isObject(shown) && typeof shown.action === "string") {
    var rest = Object.keys(shown).filter(function (name) {
      return name !== "action";
    });
    var details = rest.map(function (name) {
      var said = shown[name];
      return name + ": " + (typeof said === "string" ? "“" + said + "”" : JSON.stringify(said));
    });
    return shown.action + (details.length ? " (" + details.join("; ") + ")" : "");
  }
  return typeof shown === "string" ? shown : JSON.stringify(shown);
}

// An answer as a person reads it: our `{action, note?, args?}`, the middleware's decisions (each beside the
// call it decides, when `calls` gives them as {name, args}), or any other value as a table.
export function answer(container, shown, calls) {
  if (isObject(shown) && Array.isArray(shown.decisions)) {
    var list = make("ul", null, "decisions");
    shown.decisions.forEach(function (decision, index) {
      var call = calls && calls[index] ? calls[index] : null;
      list.appendChild(make("li", (call ? call.name + ": " : "") + decisionText(decision, call && call.args)));
    });
    container.appendChild(list);
  } else if (isObject(shown) && typeof shown.action === "string") {
    var rest = Object.assign({}, shown);
    delete rest.action;
    container.appendChild(make("p", "Answer: " + shown.action, "answer-action"));
    if (Object.keys(rest).length) {
      container.appendChild(table(rest));
    }
  } else if (shown === null || shown === undefined) {
    container.appendChild(make("p", "No answer (null).", "muted"));
  } else {
    value(container, shown);
  }
  return container;
}
