"""Shaped webhooks: POST each envelope as JSON the receiver already understands, shaped by a template per
transition, so a chat tool's incoming webhook (Slack, Google Chat, Discord, Mattermost, a Teams flow) or any
other HTTP endpoint can be fed without code (see docs/announcers.md, "Shaped webhooks").

Templates are Jinja2, rendered in its sandbox (a template can read the values it is given, call no method that
changes anything, and reach nothing else). Every `{{ ... }}` is written as a JSON value: a string with its quotes
and escapes, a number as a number, a mapping as an object. So a question's text can never break out of a string
or add a field; build a longer string inside the expression (`{{ "Waiting: " ~ envelope.question_id }}`). What a
template renders must be one JSON value; every template is rendered for sample questions when the announcer is
built, so a template that does not parse, reads a name it is not given, or renders something that is not JSON
fails then (`WebhookTemplateError`), not at the first question.

The names a template reads:

- `envelope`: the envelope as `docs/message-formats.md` describes it (`envelope.question`, `envelope.tags`, ...);
- `event`: its type (`wait.created`, ...); `question_id`, `thread_id`;
- `links`: the signed answer links by action, on the `wait.created` envelope of an announcer named in
  `AGENT_WAIT_LINK_ANNOUNCERS` (`shaped`), else empty;
- `inbox_url`: the question in the inbox page, or None.

The channel's parts, declared in `channel.py` (`agent_wait.channels.contract`): `announce.py` (the announcer and
its templates' checks) and `preview.py` (the body a receiver gets). Needs Jinja2 (the `host` extra).
"""

from agent_wait.channels.shaped.announce import ShapedWebhookAnnounce, check_templates

__all__ = ("ShapedWebhookAnnounce", "check_templates")
