"""The base of every schema a model fills in.

Two rules hold for all of them, because they decide whether a small model can answer at all:

* **no docstrings in the schema**: a class docstring is for developers; sent to the model as the
  schema's ``description``, a small model copies it into its answer;
* **no indirection**: nested models are inlined (no ``$ref``/``$defs``, no nested titles); tiny
  models copy such plumbing into their answers (``"#/$defs"``);
* **bounded lengths**: every string and list has a ``max_length``. The schema becomes a decoding
  grammar on llama.cpp and Ollama, and a small model without limits writes until it runs out of
  tokens. :func:`unbounded` lists the fields that break this rule (a test runs it over every
  answer schema in the package).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict


def _drop_docstring(schema: dict[str, Any], cls: type) -> None:
    schema.pop("description", None)


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every ``$ref`` replaced by its definition, without ``$defs`` and without
    nested titles (the top-level title, which names the answer type, stays)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: walk(v) for k, v in node.items() if k not in ("$defs", "title")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(schema)
    if "title" in schema:
        out["title"] = schema["title"]
    return out


class Answer(BaseModel):
    """Base of the answer schemas sent to models: plain JSON schema, no docstrings."""

    model_config = ConfigDict(json_schema_extra=_drop_docstring)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        """The inlined schema; the default one is built once per class (every request and every
        check of the gate asks for it) and handed out as a copy, so no caller can change it."""
        if args or kwargs:
            return inline_refs(super().model_json_schema(*args, **kwargs))
        cached = cls.__dict__.get("_argnb_schema")
        if cached is None:
            cached = inline_refs(super().model_json_schema())
            cls._argnb_schema = cached  # type: ignore[attr-defined]
        return copy.deepcopy(cached)


def unbounded(model: type[BaseModel]) -> list[str]:
    """Paths of string / array fields in ``model``'s JSON schema that have no maximum length.

    >>> from pydantic import Field
    >>> class A(Answer):
    ...     ok: str = Field(max_length=9)
    ...     loose: list[str] = Field(max_length=3)
    >>> unbounded(A)
    ['loose[]']
    """
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    out: list[str] = []

    def walk(node: dict[str, Any], path: str, seen: frozenset[str]) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in seen:
                walk(defs[name], path, seen | {name})
            return
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, path, seen)
        kind = node.get("type")
        if kind == "string" and not {"maxLength", "enum", "const"} & set(node):
            out.append(path or "(root)")
        if kind == "array":
            if "maxItems" not in node:
                out.append(path or "(root)")
            walk(node.get("items", {}), path + "[]", seen)
        for name, sub in node.get("properties", {}).items():
            walk(sub, f"{path}.{name}" if path else name, seen)

    walk(schema, "", frozenset())
    return out
