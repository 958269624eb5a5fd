"""OpenAIBackend over the official ``openai`` client: OpenAI and any compatible server.

``base_url`` reaches vLLM, LM Studio, llama.cpp's server or Ollama's ``/v1``. Servers differ in
what structured output they accept, so we try, in order, ``response_format`` json_schema, then
``{"type": "json_object", "schema": ...}`` (llama.cpp's server answers 500 to json_schema but takes
this), then plain ``json_object``, then no response_format at all (the schema is still in the
prompt, and :mod:`argnb.llm.structured` validates). The first mode that works is remembered.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from argnb.errors import (
    AuthenticationError,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ModelNotFound,
    SchemaUnsupported,
)
from argnb.llm.base import Backend, Message, Options, Reply, Usage, public_url

MODES = ("json_schema", "json_object_schema", "json_object", "plain")
OPENAI_URL = "https://api.openai.com/v1"


def response_format(mode: str, schema: dict) -> dict | None:
    """The ``response_format`` argument for a structured-output mode."""
    if mode == "json_schema":
        name = str(schema.get("title") or "answer")[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


class OpenAIBackend(Backend):
    """Chat completions and embeddings against an OpenAI-compatible server."""

    name = "openai"

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        embed_model: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(model, **kw)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == OPENAI_URL:
                raise AuthenticationError(
                    "no OpenAI API key",
                    hint="export OPENAI_API_KEY=... (or pass base_url=... for a local server)",
                )
            key = "not-needed"  # local servers ignore it; the client insists on one
        self._key = key  # kept private: never part of describe(), caches or logs
        self.timeout = timeout
        self.embed_model = embed_model or model
        self.mode: str = MODES[0]
        self._sync: Any = None

    def _make(self, cls_name: str) -> Any:
        import openai

        cls = getattr(openai, cls_name)
        return cls(base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0)

    @property
    def client(self) -> Any:
        if self._sync is None:
            self._sync = self._make("OpenAI")
        return self._sync

    # -- request / response -------------------------------------------------------------
    def _request(
        self, messages: list[Message], schema: dict | None, options: Options, mode: str
    ) -> dict:
        req: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
        }
        if options.seed is not None:
            req["seed"] = options.seed
        if schema is not None:
            fmt = response_format(mode, schema)
            if fmt is not None:
                req["response_format"] = fmt
        return req

    def _reply(self, resp: Any) -> Reply:
        u = resp.usage
        return Reply(
            text=resp.choices[0].message.content or "",
            usage=Usage(
                prompt_tokens=getattr(u, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(u, "completion_tokens", 0) or 0,
            ),
            model=resp.model or self.model,
            backend=self.name,
        )

    def _translate(
        self, exc: BaseException, structured: bool, model: str | None = None
    ) -> BaseException:
        import openai

        model = model or self.model
        if isinstance(exc, openai.APITimeoutError):
            return BackendTimeout(
                f"{public_url(self.base_url)} did not answer within {self.timeout:.0f} s",
                hint="retry later, use a smaller model, or pass timeout=...",
            )
        if isinstance(exc, openai.APIConnectionError):
            return BackendUnavailable(
                f"cannot reach an OpenAI-compatible server at {public_url(self.base_url)}",
                hint="check base_url (e.g. http://127.0.0.1:11434/v1 for Ollama, "
                "http://127.0.0.1:8000/v1 for llama.cpp's server) and that the server runs",
            )
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return AuthenticationError(
                f"{public_url(self.base_url)} refused the API key", hint="check OPENAI_API_KEY"
            )
        if isinstance(exc, openai.NotFoundError):
            if "model" in str(exc).lower():
                return ModelNotFound(
                    f"{public_url(self.base_url)} has no model {model!r}",
                    hint="list the models with `argnb doctor` and pass one of them",
                )
            return BackendUnavailable(
                f"{public_url(self.base_url)} answered 404: is this the API root?",
                hint="base_url usually ends in /v1",
            )
        if isinstance(exc, openai.RateLimitError):
            return BackendTimeout(f"rate limited by {public_url(self.base_url)}")
        if structured and isinstance(
            exc,
            openai.BadRequestError | openai.UnprocessableEntityError | openai.InternalServerError,
        ):
            return SchemaUnsupported(f"server refused structured mode {self.mode!r}: {exc}")
        if isinstance(exc, openai.InternalServerError):
            return BackendTimeout(f"server error from {public_url(self.base_url)}: {exc}")
        if isinstance(exc, openai.APIStatusError):
            return BackendError(f"{public_url(self.base_url)} answered {exc.status_code}: {exc}")
        return exc

    def _next_mode(self, failed: str) -> bool:
        """Degrade to the next structured mode; False when none is left."""
        i = MODES.index(failed)
        if self.mode == failed and i + 1 < len(MODES):
            self.mode = MODES[i + 1]
            return True
        return self.mode != failed  # another call already degraded it

    def _fallback_or_raise(self, exc: Exception, mode: str, schema: dict | None) -> None:
        """Return (to retry in a weaker mode) when the server refused a schema; else raise."""
        err = self._translate(exc, schema is not None and mode != "plain")
        if isinstance(err, SchemaUnsupported) and self._next_mode(mode):
            return
        raise err from exc

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        while True:
            mode = self.mode
            try:
                req = self._request(messages, schema, options, mode)
                return self._reply(self.client.chat.completions.create(**req))
            except Exception as exc:
                self._fallback_or_raise(exc, mode, schema)

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        client = self._loop_client(lambda: self._make("AsyncOpenAI"))
        while True:
            mode = self.mode
            try:
                req = self._request(messages, schema, options, mode)
                return self._reply(await client.chat.completions.create(**req))
            except Exception as exc:
                self._fallback_or_raise(exc, mode, schema)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            resp = self.client.embeddings.create(model=self.embed_model, input=list(texts))
        except Exception as exc:
            raise self._translate(exc, False, self.embed_model) from exc
        return [list(d.embedding) for d in resp.data]

    def list_models(self) -> list[str]:
        try:
            return [m.id for m in self.client.models.list()]
        except Exception as exc:
            raise self._translate(exc, False) from exc

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "base_url": public_url(self.base_url)}
