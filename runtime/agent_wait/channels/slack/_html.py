"""Block Kit as HTML: a Slack-like drawing of messages and modals, without a workspace (`preview.py` uses it).

`preview_page` renders messages (with their thread replies) as one self-contained page that looks like a Slack
channel: the bot's name and avatar square, times, the "(edited)" marker, replies indented under their parent.
`preview_modal` renders a modal view. The page is static: no JavaScript, nothing loaded from elsewhere (an image
shows its alt text), every style in the one `<style>` element and no `style` attributes, so a strict
Content-Security-Policy with a hash or nonce for that element allows it.

Text is converted the way Slack reads it. Text sent to Slack escapes `&`, `<` and `>` as `&amp;`, `&lt;` and
`&gt;`; unescaped `<` and `>` delimit its control sequences (links, mentions). So the converter finds the control
sequences first, turns Slack's three entities back into characters, and escapes the result for HTML exactly once.
Only `http`, `https` and `mailto` links become links; anything else stays text.

Standard library only. Long on purpose: it is one renderer, block type by block type, with Slack's mrkdwn rules
beside them; split, the rules would be read apart from the blocks that use them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["BOT_NAME", "PreviewMessage", "mrkdwn_to_html", "preview_modal", "preview_page"]

BOT_NAME = "agent-wait"
"""The name every previewed message is posted under."""

SAFE_SCHEMES = ("http://", "https://", "mailto:")


@dataclass(frozen=True)
class PreviewMessage:
    """One message to preview: Slack's JSON for its blocks, the fallback text, its thread replies."""

    channel: str
    ts: str
    blocks: Sequence[Mapping[str, Any]] = ()
    text: str = ""
    """The fallback text; shown when there are no blocks."""
    replies: tuple[PreviewMessage, ...] = ()
    edited: bool = False


# -- text: Slack's mrkdwn to HTML --------------------------------------------------------------------------------

_PRIVATE = re.compile("[\ue000-\ue002]")
_HOLE = re.compile("\ue000(\\d+)\ue001")
_CODE_BLOCK = re.compile(r"```(.+?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_CONTROL = re.compile(r"<([^<>\n]*)>")
_BOLD = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])")
_ITALIC = re.compile(r"(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])")
_STRIKE = re.compile(r"(?<![\w~])~(?=\S)([^~\n]*?\S)~(?![\w~])")
_QUOTE_MARK = re.compile(r"^&gt; ?")


def _unslack(text: str) -> str:
    """Slack's three entities back to characters (`&amp;` last, so `&amp;lt;` stays `&lt;` as text)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _escape(text: str) -> str:
    """Text as sent to Slack, as HTML: Slack's entities undone, then escaped once."""
    return html.escape(_unslack(text), quote=True)


def _safe_url(url: str, *, slack: bool = True) -> str | None:
    url = (_unslack(url) if slack else url).strip()
    return url if url.lower().startswith(SAFE_SCHEMES) else None


def _link(url: str, label: str, *, slack: bool = True) -> str:
    """A link if its scheme is http, https or mailto, else its text. `slack`: the strings use Slack's escaping."""
    safe = _safe_url(url, slack=slack)
    shown = _escape(label or url) if slack else html.escape(label or url)
    if safe is None:
        return f'<span class="link-text">{shown}</span>'
    return f'<a href="{html.escape(safe, quote=True)}" rel="noopener noreferrer nofollow">{shown}</a>'


def _control(inner: str) -> str:
    """One `<...>` control sequence as HTML."""
    target, _, label = inner.partition("|")
    if target.startswith("@"):
        return f'<span class="mention">@{_escape(label or target[1:])}</span>'
    if target.startswith("#"):
        return f'<span class="mention">#{_escape(label or target[1:])}</span>'
    if target.startswith("!subteam^"):
        handle = (label or target.removeprefix("!subteam^")).lstrip("@")
        return f'<span class="mention">@{_escape(handle)}</span>'
    if target in ("!here", "!channel", "!everyone"):
        return f'<span class="mention">@{_escape(target[1:])}</span>'
    if target.startswith("!"):  # a date or another special form: its fallback text
        return _escape(label or target[1:].split("^", 1)[0])
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
        return _link(target, label)
    return _escape(f"<{inner}>")  # not a control sequence Slack knows: the characters as they are


_EMOJI = re.compile(r":([a-z0-9_+-]+):")
_EMOJI_CHARACTERS = {
    "white_check_mark": "\u2705",
    "alarm_clock": "\u23f0",
    "no_entry_sign": "\U0001f6ab",
    "warning": "\u26a0\ufe0f",
    "bell": "\U0001f514",
    "arrow_up": "\u2b06\ufe0f",
}
"""The emoji shortcodes the announcer uses, as the characters Slack shows; any other shortcode stays as written."""


def mrkdwn_to_html(text: str) -> str:
    """Slack `mrkdwn` as inline HTML (`<br>` for line breaks, `<blockquote>` for quoted lines)."""
    holes: list[str] = []

    def hole(rendered: str) -> str:
        holes.append(rendered)
        return f"\ue000{len(holes) - 1}\ue001"

    text = _PRIVATE.sub("", text)
    text = _CODE_BLOCK.sub(lambda m: hole(f'<pre class="code-block">{_escape(m.group(1).strip(chr(10)))}</pre>'), text)
    text = _INLINE_CODE.sub(lambda m: hole(f"<code>{_escape(m.group(1))}</code>"), text)
    text = _CONTROL.sub(lambda m: hole(_control(m.group(1))), text)
    text = _escape(text)
    text = _EMOJI.sub(lambda m: _EMOJI_CHARACTERS.get(m.group(1), m.group(0)), text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITALIC.sub(r"<em>\1</em>", text)
    text = _STRIKE.sub(r"<del>\1</del>", text)
    out: list[str] = []
    quoted: list[str] = []
    for line in text.split("\n"):
        # A quote line arrives as "&gt; ..." (escaped, as Slack stores it) or "> ..." (now escaped too).
        marker = _QUOTE_MARK.match(line)
        if marker:
            quoted.append(line[marker.end() :])
            continue
        if quoted:
            out.append("<blockquote>" + "<br>".join(quoted) + "</blockquote>")
            quoted = []
        out.append(line + "<br>")
    if quoted:
        out.append("<blockquote>" + "<br>".join(quoted) + "</blockquote>")
    rendered = "".join(out).removesuffix("<br>")
    rendered = _HOLE.sub(lambda m: holes[int(m.group(1))], rendered)
    return rendered.replace("</pre><br>", "</pre>")  # user text is escaped: this can only be a code block's end


def _text(obj: Any) -> str:
    """A Block Kit text object (`plain_text` or `mrkdwn`) as inline HTML."""
    if isinstance(obj, str):
        return _escape(obj)
    if not isinstance(obj, Mapping):
        return ""
    value = str(obj.get("text", ""))
    if obj.get("type") == "mrkdwn":
        return mrkdwn_to_html(value)
    return _escape(value).replace("\n", "<br>")


# -- elements -----------------------------------------------------------------------------------------------------


def _button(element: Mapping[str, Any]) -> str:
    style = element.get("style")
    kind = style if style in ("primary", "danger") else "default"
    label = _text(element.get("text"))
    url = element.get("url")
    safe = _safe_url(str(url)) if url else None
    if safe is not None:
        return (
            f'<a class="button {kind}" href="{html.escape(safe, quote=True)}" rel="noopener noreferrer nofollow">'
            f'{label}<span class="external" aria-hidden="true"> &#8599;</span></a>'
        )
    return f'<button type="button" class="button {kind}">{label}</button>'


def _option_text(option: Any) -> str:
    return _text(option.get("text")) if isinstance(option, Mapping) else ""


def _element(element: Any) -> str:
    """An interactive element (in an actions block, an accessory or an input)."""
    if not isinstance(element, Mapping):
        return ""
    kind = element.get("type")
    if kind == "button":
        return _button(element)
    if kind == "image":
        return _image(element)
    if kind in ("plain_text_input", "number_input", "email_text_input", "url_text_input", "rich_text_input"):
        value = element.get("initial_value")
        css = "field multiline" if element.get("multiline") else "field"
        if value not in (None, ""):
            return f'<div class="{css}">{_escape(str(value)).replace(chr(10), "<br>")}</div>'
        return f'<div class="{css}"><span class="placeholder">{_text(element.get("placeholder"))}</span></div>'
    if kind in ("checkboxes", "radio_buttons"):
        chosen = element.get("initial_options") or (
            [element["initial_option"]] if element.get("initial_option") else []
        )
        chosen_values = {option.get("value") for option in chosen if isinstance(option, Mapping)}
        mark = "checkbox" if kind == "checkboxes" else "radio"
        items = "".join(
            f'<li><span class="{mark}{" on" if option.get("value") in chosen_values else ""}" aria-hidden="true">'
            f"</span>{_option_text(option)}</li>"
            for option in element.get("options") or []
            if isinstance(option, Mapping)
        )
        return f'<ul class="options">{items}</ul>'
    if kind == "overflow":
        return '<button type="button" class="button default overflow" aria-label="More">&#8942;</button>'
    if kind in ("datepicker", "timepicker", "datetimepicker"):
        value = element.get("initial_date") or element.get("initial_time") or element.get("initial_date_time")
        shown = (
            _escape(str(value)) if value else f'<span class="placeholder">{_text(element.get("placeholder"))}</span>'
        )
        return f'<div class="field select">{shown}</div>'
    if isinstance(kind, str) and kind.endswith("_select"):
        initial = element.get("initial_option") or next(iter(element.get("initial_options") or []), None)
        if initial:
            shown = _option_text(initial)
        else:
            shown = f'<span class="placeholder">{_text(element.get("placeholder")) or "Select an item"}</span>'
        return f'<div class="field select">{shown}<span class="caret" aria-hidden="true">&#9662;</span></div>'
    return _unsupported(f"element: {kind}")


def _image(element: Mapping[str, Any]) -> str:
    """An image as its alt text: the preview loads nothing from elsewhere."""
    alt = _escape(str(element.get("alt_text", "")))
    return f'<span class="image" role="img" aria-label="{alt}">image: {alt}</span>'


def _unsupported(what: str) -> str:
    return f'<div class="unsupported">unsupported {_escape(what)}</div>'


# -- blocks -------------------------------------------------------------------------------------------------------


def _section(block: Mapping[str, Any]) -> str:
    parts = []
    if block.get("text"):
        parts.append(f'<div class="section-text">{_text(block["text"])}</div>')
    fields = [field for field in block.get("fields") or [] if field]
    if fields:
        parts.append(
            '<div class="fields">' + "".join(f'<div class="field-cell">{_text(f)}</div>' for f in fields) + "</div>"
        )
    accessory = block.get("accessory")
    body = f'<div class="section-body">{"".join(parts)}</div>'
    if accessory:
        body += f'<div class="accessory">{_element(accessory)}</div>'
    return f'<div class="block section">{body}</div>'


def _context(block: Mapping[str, Any]) -> str:
    items = []
    for element in block.get("elements") or []:
        if isinstance(element, Mapping) and element.get("type") == "image":
            items.append(_image(element))
        else:
            items.append(f"<span>{_text(element)}</span>")
    return f'<div class="block context">{"".join(items)}</div>'


def _actions(block: Mapping[str, Any]) -> str:
    return f'<div class="block actions">{"".join(_element(e) for e in block.get("elements") or [])}</div>'


def _input(block: Mapping[str, Any]) -> str:
    optional = ' <span class="optional">(optional)</span>' if block.get("optional") else ""
    hint = f'<div class="hint">{_text(block["hint"])}</div>' if block.get("hint") else ""
    return (
        f'<div class="block input"><div class="label">{_text(block.get("label"))}{optional}</div>'
        f"{_element(block.get('element'))}{hint}</div>"
    )


_RICH_STYLES = (("code", "code"), ("bold", "strong"), ("italic", "em"), ("strike", "del"))


def _emoji(element: Mapping[str, Any]) -> str:
    try:
        return "".join(chr(int(code, 16)) for code in str(element["unicode"]).split("-"))
    except (KeyError, ValueError, OverflowError):
        return html.escape(f":{element.get('name', '')}:")


def _rich_inline(elements: Iterable[Any]) -> str:
    out = []
    for element in elements:
        if not isinstance(element, Mapping):
            continue
        kind = element.get("type")
        if kind == "text":
            rendered = html.escape(str(element.get("text", ""))).replace("\n", "<br>")
        elif kind == "link":
            rendered = _link(str(element.get("url", "")), str(element.get("text") or ""), slack=False)
        elif kind == "user":
            rendered = f'<span class="mention">@{html.escape(str(element.get("user_id", "")))}</span>'
        elif kind == "usergroup":
            rendered = f'<span class="mention">@{html.escape(str(element.get("usergroup_id", "")))}</span>'
        elif kind == "channel":
            rendered = f'<span class="mention">#{html.escape(str(element.get("channel_id", "")))}</span>'
        elif kind == "emoji":
            rendered = _emoji(element)
        else:
            rendered = html.escape(str(element.get("text", "")))
        style = element.get("style") or {}
        for key, tag in _RICH_STYLES:
            if isinstance(style, Mapping) and style.get(key):
                rendered = f"<{tag}>{rendered}</{tag}>"
        out.append(rendered)
    return "".join(out)


def _rich_text(block: Mapping[str, Any]) -> str:
    parts = []
    for element in block.get("elements") or []:
        if not isinstance(element, Mapping):
            continue
        kind = element.get("type")
        inner = element.get("elements") or []
        if kind == "rich_text_section":
            parts.append(f"<div>{_rich_inline(inner)}</div>")
        elif kind == "rich_text_preformatted":
            parts.append(f'<pre class="code-block">{_rich_inline(inner)}</pre>')
        elif kind == "rich_text_quote":
            parts.append(f"<blockquote>{_rich_inline(inner)}</blockquote>")
        elif kind == "rich_text_list":
            tag = "ol" if element.get("style") == "ordered" else "ul"
            items = "".join(
                f"<li>{_rich_inline(item.get('elements') or [])}</li>" for item in inner if isinstance(item, Mapping)
            )
            parts.append(f"<{tag}>{items}</{tag}>")
        else:
            parts.append(_unsupported(f"rich text element: {kind}"))
    return f'<div class="block rich-text">{"".join(parts)}</div>'


def _image_block(block: Mapping[str, Any]) -> str:
    title = f'<div class="image-title">{_text(block["title"])}</div>' if block.get("title") else ""
    return f'<div class="block image-block">{title}{_image(block)}</div>'


_BLOCKS = {
    "header": lambda block: f'<div class="block header">{_text(block.get("text"))}</div>',
    "section": _section,
    "context": _context,
    "divider": lambda block: '<hr class="block divider">',
    "actions": _actions,
    "input": _input,
    "rich_text": _rich_text,
    "image": _image_block,
}


def _blocks(blocks: Iterable[Any]) -> str:
    out = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        render = _BLOCKS.get(kind) if isinstance(kind, str) else None
        out.append(render(block) if render and isinstance(block, Mapping) else _unsupported(f"block: {kind}"))
    return "".join(out)


# -- messages, modals, the page -----------------------------------------------------------------------------------


def _time(ts: str) -> str:
    try:
        moment = datetime.fromtimestamp(float(ts), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return f'<span class="time">{_escape(ts)}</span>'
    return (
        f'<time class="time" datetime="{moment.isoformat(timespec="seconds")}" title="{moment:%Y-%m-%d %H:%M:%S} UTC">'
        f"{moment:%H:%M}</time>"
    )


def _message(message: PreviewMessage, *, reply: bool = False) -> str:
    body = (
        _blocks(message.blocks)
        if message.blocks
        else f'<div class="block fallback">{mrkdwn_to_html(message.text)}</div>'
    )
    edited = '<span class="edited">(edited)</span>' if message.edited else ""
    thread = ""
    if message.replies:
        count = len(message.replies)
        thread = (
            f'<div class="thread"><div class="reply-count">{count} {"reply" if count == 1 else "replies"}</div>'
            + "".join(_message(one, reply=True) for one in message.replies)
            + "</div>"
        )
    css = "message reply" if reply else "message"
    return (
        f'<article class="{css}" id="m-{html.escape(message.ts, quote=True)}">'
        f'<div class="avatar" aria-hidden="true">aw</div><div class="content">'
        f'<div class="meta"><span class="author">{BOT_NAME}</span><span class="app-badge">APP</span>'
        f"{_time(message.ts)}</div>"
        f'<div class="blocks">{body}</div>{edited}{thread}</div></article>'
    )


def preview_modal(view: Mapping[str, Any]) -> str:
    """A modal view (Slack's JSON, as given to `views.open`) as an HTML fragment: title, blocks, buttons."""
    close = _text(view.get("close")) or "Cancel"
    submit = (
        f'<button type="button" class="button primary">{_text(view["submit"])}</button>' if view.get("submit") else ""
    )
    return (
        '<div class="modal" role="dialog">'
        f'<div class="modal-header"><span class="avatar small" aria-hidden="true">aw</span>'
        f'<span class="modal-title">{_text(view.get("title"))}</span>'
        '<span class="modal-x" aria-hidden="true">&#215;</span></div>'
        f'<div class="modal-body">{_blocks(view.get("blocks") or [])}</div>'
        f'<div class="modal-footer"><button type="button" class="button default">{close}</button>{submit}</div>'
        "</div>"
    )


def preview_page(
    messages: Sequence[PreviewMessage], *, title: str = "Slack preview", modals: Sequence[Mapping[str, Any]] = ()
) -> str:
    """One self-contained HTML page showing `messages` as a Slack channel, grouped by channel, and `modals`."""
    channels: dict[str, list[PreviewMessage]] = {}
    for message in messages:
        channels.setdefault(message.channel, []).append(message)
    columns = "".join(
        '<section class="channel"><header class="channel-header">'
        f'<span class="hash">#</span>{_escape(channel)}</header>'
        f'<div class="history">{"".join(_message(message) for message in listed)}</div></section>'
        for channel, listed in channels.items()
    )
    if modals:
        columns += '<section class="modals">' + "".join(preview_modal(view) for view in modals) + "</section>"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_escape(title)}</title><style>{_CSS}</style></head>"
        f'<body><main class="preview"><h1 class="page-title">{_escape(title)}</h1>{columns}</main></body></html>\n'
    )


_CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f8f8f8;color:#1d1c1d;font:15px/1.46668 -apple-system,BlinkMacSystemFont,"Segoe UI",
Roboto,Helvetica,Arial,sans-serif}
.preview{display:flex;flex-wrap:wrap;gap:24px;padding:24px;align-items:flex-start}
.page-title{flex-basis:100%;margin:0;font-size:13px;font-weight:400;color:#616061}
.channel{flex:1 1 560px;max-width:760px;background:#fff;border:1px solid #dddddd;border-radius:8px;overflow:hidden}
.channel-header{padding:12px 20px;border-bottom:1px solid #dddddd;font-weight:900;font-size:18px}
.hash{color:#616061;margin-right:2px;font-weight:400}
.history{padding:8px 0}
.message{display:flex;gap:8px;padding:8px 20px}
.message:hover{background:#f8f8f8}
.avatar{flex:0 0 36px;width:36px;height:36px;border-radius:6px;background:#4a154b;color:#fff;font-weight:700;
font-size:13px;display:flex;align-items:center;justify-content:center;text-transform:lowercase}
.avatar.small{flex-basis:24px;width:24px;height:24px;font-size:10px;border-radius:4px}
.content{flex:1;min-width:0}
.meta{display:flex;align-items:baseline;gap:6px}
.author{font-weight:900}
.app-badge{font-size:10px;font-weight:700;color:#616061;background:#e8e8e8;border-radius:2px;padding:0 3px}
.time{font-size:12px;color:#616061}
.edited{font-size:13px;color:#616061}
.block{margin:4px 0}
.header{font-size:18px;font-weight:900;line-height:1.33}
.section{display:flex;gap:12px;justify-content:space-between}
.section-body{flex:1;min-width:0}
.fields{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin-top:4px}
.accessory{flex:0 0 auto}
.context{display:flex;flex-wrap:wrap;gap:8px;align-items:center;font-size:13px;color:#616061}
.divider{border:0;border-top:1px solid #dddddd;margin:12px 0}
.actions{display:flex;flex-wrap:wrap;gap:8px}
.button{display:inline-flex;align-items:center;min-height:28px;padding:4px 12px;box-sizing:border-box;
border-radius:4px;font:inherit;
font-size:13px;font-weight:700;border:1px solid #bbbabb;background:#fff;color:#1d1c1d;text-decoration:none;
cursor:default}
.button.primary{background:#007a5a;border-color:#007a5a;color:#fff}
.button.danger{background:#e01e5a;border-color:#e01e5a;color:#fff}
.button.overflow{padding:0 8px}
.input .label{font-weight:700;margin-bottom:4px}
.optional,.hint{font-weight:400;color:#616061;font-size:13px}
.hint{margin-top:4px}
.field{min-height:36px;padding:7px 12px;border:1px solid #bbbabb;border-radius:4px;background:#fff}
.field.multiline{min-height:84px}
.field.select{display:flex;justify-content:space-between;gap:8px}
.placeholder{color:#868686}
.caret{color:#616061}
.options{list-style:none;margin:0;padding:0}
.options li{display:flex;gap:8px;align-items:center;margin:4px 0}
.checkbox,.radio{display:inline-block;width:16px;height:16px;border:1px solid #868686;background:#fff}
.checkbox{border-radius:3px}
.radio{border-radius:50%}
.checkbox.on,.radio.on{background:#1264a3;border-color:#1264a3}
.image{display:inline-block;padding:2px 6px;border:1px dashed #bbbabb;border-radius:4px;color:#616061;font-size:13px}
.image-title{font-size:13px;color:#616061}
a{color:#1264a3;text-decoration:none}
a:hover{text-decoration:underline}
.link-text{color:#1d1c1d}
.mention{color:#1264a3;background:#e8f5fa;border-radius:3px;padding:0 2px}
code{font:12px/1.5 Monaco,Menlo,Consolas,monospace;color:#e01e5a;background:#f7f7f9;border:1px solid #dddddd;
border-radius:3px;padding:2px 3px}
.code-block{font:12px/1.5 Monaco,Menlo,Consolas,monospace;background:#f7f7f9;border:1px solid #dddddd;
border-radius:4px;padding:8px;margin:4px 0;white-space:pre-wrap}
blockquote{margin:4px 0;padding-left:12px;border-left:4px solid #dddddd}
.thread{margin-top:8px;border-left:2px solid #dddddd;padding-left:4px}
.reply-count{font-size:13px;font-weight:700;color:#1264a3;padding:0 16px}
.message.reply{padding:6px 16px}
.unsupported{font-size:12px;color:#868686}
.modals{flex:0 1 520px;display:flex;flex-direction:column;gap:24px}
.modal{background:#fff;border-radius:8px;box-shadow:0 18px 48px rgba(0,0,0,.25);overflow:hidden}
.modal-header{display:flex;align-items:center;gap:8px;padding:16px 20px;border-bottom:1px solid #dddddd}
.modal-title{flex:1;font-size:20px;font-weight:900}
.modal-x{font-size:22px;color:#616061}
.modal-body{padding:16px 20px;display:flex;flex-direction:column;gap:12px}
.modal-footer{display:flex;justify-content:flex-end;gap:8px;padding:16px 20px;border-top:1px solid #dddddd}
"""
