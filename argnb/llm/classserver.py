"""A learner's side of the class server: the settings the hub hands every learner's server.

On a hub set up with :func:`argnb.classroom.hub.configure`, each single-user server starts with
``ARGNB_CLASS_URL`` (the gateway), ``ARGNB_CLASS_MODEL`` and ``ARGNB_CLASS_NAME`` in its
environment, and with its own hub token in ``JUPYTERHUB_API_TOKEN``. Then argnb's default backend
is the class server (:class:`ClassBackend`): the token says who the learner is, nothing is
configured by hand, and no shared key ever sits in a learner's environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from argnb.llm.openai import OpenAIBackend

#: the header the gateway files a request's usage under (argnb.classroom.gateway reads it)
LESSON_HEADER = "X-Argnb-Lesson"


@dataclass(frozen=True)
class ClassSettings:
    """Where the class model is, and the learner's token for it."""

    name: str
    url: str
    model: str
    token: str = field(repr=False)


def class_settings(env: dict[str, str] | None = None) -> ClassSettings | None:
    """The class server this process was started for, or None outside a class hub."""
    env = dict(os.environ if env is None else env)
    url, token = env.get("ARGNB_CLASS_URL", ""), env.get("JUPYTERHUB_API_TOKEN", "")
    if not url or not token:
        return None
    return ClassSettings(
        name=env.get("ARGNB_CLASS_NAME") or "class server",
        url=url.rstrip("/"),
        model=env.get("ARGNB_CLASS_MODEL") or "",
        token=token,
    )


def lesson(env: dict[str, str] | None = None) -> str:
    """The notebook this kernel runs (Jupyter sets ``JPY_SESSION_NAME``), for usage per lesson."""
    env = os.environ if env is None else env
    path = env.get("JPY_SESSION_NAME", "")
    return PurePath(path).stem[:120] if path else ""


class ClassBackend(OpenAIBackend):
    """The class model through the hub's gateway, as this learner."""

    name = "class"

    def __init__(self, settings: ClassSettings, model: str | None = None, **kw: Any) -> None:
        self.settings = settings
        super().__init__(
            model or settings.model, base_url=settings.url, api_key=settings.token, **kw
        )

    def _make(self, cls_name: str) -> Any:
        import openai

        cls = getattr(openai, cls_name)
        return cls(
            base_url=self.base_url,
            api_key=self._key,
            timeout=self.timeout,
            max_retries=0,
            default_headers={LESSON_HEADER: lesson()},
        )

    def allowance(self) -> dict[str, Any]:
        """Today's tokens for this learner: used, the limit and what is left."""
        return self._call(lambda: self.client.get("/argnb/allowance", cast_to=object))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "backend": self.name, "class": self.settings.name}


def allowance_text(a: dict[str, Any]) -> str:
    """One line for ``argnb doctor`` and the backend picker."""
    return (
        f"today: {a.get('remaining', 0):,} of {a.get('tokens_per_day', 0):,} tokens left "
        f"({a.get('concurrent', '?')} requests at once)"
    )
