"""Prompt templates of the roundtable roles (moderator, deliberator, analyzer), as Markdown.

Read and adapt them like any argnb prompt: ``argnb.prompts.load("argnb.roundtable", "moderator")``;
pass a folder with edited copies as ``prompt_dir=`` to :class:`argnb.roundtable.Session`. This
file only makes the folder a package so the templates ship with argnb.
"""
