"""The critique prompts: Markdown templates read by :mod:`argnb.prompts` (``rubric.md`` is the
rubric itself, inserted as text)."""
