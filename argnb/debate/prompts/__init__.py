"""Prompt templates of the debate agents (scheme annotation, scoring, keywords), as Markdown.

Copy this folder to adapt the wording and pass the copy as ``prompt_dir``.
"""
