// agent-wait dev: draw every card the local Teams webhook kept with the Adaptive Cards renderer.
// Question content arrives only as card JSON; every text goes through the renderer or textContent, and the
// Markdown below escapes HTML before it adds <strong> and <em>.
(function () {
  "use strict";

  var HOST_CONFIG = {
    fontFamily: "'Segoe UI', system-ui, -apple-system, sans-serif",
    spacing: { small: 4, default: 8, medium: 12, large: 16, extraLarge: 24, padding: 14 },
    separator: { lineThickness: 1, lineColor: "#E0E0E0" },
    supportsInteractivity: true,
    fontTypes: {
      default: {
        fontFamily: "'Segoe UI', system-ui, -apple-system, sans-serif",
        fontSizes: { small: 12, default: 14, medium: 14, large: 18, extraLarge: 24 },
        fontWeights: { lighter: 200, default: 400, bolder: 600 }
      },
      monospace: {
        fontFamily: "Consolas, 'Courier New', monospace",
        fontSizes: { small: 12, default: 14, medium: 14, large: 18, extraLarge: 24 },
        fontWeights: { lighter: 200, default: 400, bolder: 600 }
      }
    },
    containerStyles: {
      default: {
        backgroundColor: "#FFFFFF",
        foregroundColors: {
          default: { default: "#242424", subtle: "#616161" },
          accent: { default: "#5B5FC7", subtle: "#5B5FC7" },
          good: { default: "#237B4B", subtle: "#237B4B" },
          warning: { default: "#835B00", subtle: "#835B00" },
          attention: { default: "#C4314B", subtle: "#C4314B" }
        }
      }
    },
    actions: { maxActions: 8, spacing: "default", buttonSpacing: 8, actionsOrientation: "horizontal",
      actionAlignment: "left", showCard: { actionMode: "inline" } },
    factSet: {
      title: { color: "default", size: "default", isSubtle: true, weight: "bolder", wrap: true, maxWidth: 150 },
      value: { color: "default", size: "default", isSubtle: false, weight: "default", wrap: true },
      spacing: 12
    }
  };

  function escapeHtml(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  function markdown(text, result) {
    var html = escapeHtml(text)
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[\s(])_([^_]+)_(?=$|[\s.,;:)])/g, "$1<em>$2</em>")
      .replace(/\n/g, "<br>");
    result.outputHtml = "<p>" + html + "</p>";
    result.didProcess = true;
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function draw(entry) {
    var post = element("article", "post");
    post.setAttribute("data-event", entry.event || "");
    post.setAttribute("data-question", entry.question_id || "");
    post.appendChild(element("div", "avatar", "W"));
    var column = element("div", "column");
    var meta = element("div", "meta");
    meta.appendChild(element("strong", "", "Workflows"));
    meta.appendChild(element("span", "to", entry.recipient ? "to " + entry.recipient : "to the channel"));
    meta.appendChild(element("span", "event", entry.event || "card"));
    meta.appendChild(element("time", "", new Date(entry.received_at).toLocaleString()));
    column.appendChild(meta);
    var holder = element("div", "card");
    var card = new AdaptiveCards.AdaptiveCard();
    card.hostConfig = new AdaptiveCards.HostConfig(HOST_CONFIG);
    card.onExecuteAction = function (action) {
      if (action instanceof AdaptiveCards.OpenUrlAction && /^https?:\/\//.test(action.url || "")) {
        window.open(action.url, "_blank", "noopener");
      }
    };
    card.parse(entry.card);
    var rendered = card.render();
    if (rendered) { holder.appendChild(rendered); }
    column.appendChild(holder);
    post.appendChild(column);
    return post;
  }

  function load() {
    fetch("/dev/teams/cards.json", { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (entries) {
        var list = document.getElementById("cards");
        list.textContent = "";
        entries.forEach(function (entry) { list.appendChild(draw(entry)); });
        document.getElementById("empty").hidden = entries.length > 0;
        document.body.setAttribute("data-cards", String(entries.length));
      });
  }

  AdaptiveCards.AdaptiveCard.onProcessMarkdown = markdown;
  document.getElementById("reload").addEventListener("click", load);
  load();
})();
