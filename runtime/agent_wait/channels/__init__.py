"""Where questions reach people and systems: the envelope's fan-out (`publish`), the plain announcers (`announce`:
signed webhooks, a log, in memory), and the channels people answer in (`slack`, `email`, `teams`, `shaped`), with
what they share: what a question asks and how it ended (`asked`) and the per-question send record (`sends`).

The channel packages need their extras (Slack: `slack_sdk`; email and shaped webhooks: `jinja2`); importing this
package imports none of them.
"""
