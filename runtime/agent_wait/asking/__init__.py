"""Asking: what a `@wait` call asks and what an answer does to it (`wait`), the one call flow a binding plugs into
(`flow`), the editable arguments (`edits`), the seam between the engine and an agent (`adapter`, `delivery`), agent
versions (`versions`), questions a durable callback resumes (`callbacks`) and the stored threads of the hosted
bindings (`stored`). Standard library only."""
