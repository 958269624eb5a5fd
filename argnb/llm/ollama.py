"""OllamaBackend over the official ``ollama`` client.

Structured output uses Ollama's ``format=<JSON schema>``. The host comes from the argument,
``OLLAMA_HOST`` or the client's default (http://127.0.0.1:11434). Errors are translated into
ones that say what to run: ``ollama serve`` when nothing listens, ``ollama pull NAME`` when the
model is missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from argnb.errors import BackendError, BackendTimeout, BackendUnavailable, ModelNotFound
from argnb.llm.base import Backend, Message, Options, Reply, Usage, public_url


def _client_module() -> Any:
    import ollama

    return ollama


class OllamaBackend(Backend):
    """Chat, embeddings and model listing against an Ollama server."""

    name = "ollama"

    def __init__(
        self,
        model: str = "llama3.2",
        *,
        host: str | None = None,
        timeout: float = 120.0,
        embed_model: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(model, **kw)
        self.host = host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.timeout = timeout
        self.embed_model = embed_model or model
        self._sync: Any = None

    # -- clients ------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._sync is None:
            self._sync = _client_module().Client(host=self.host, timeout=self.timeout)
        return self._sync

    # -- request / response -------------------------------------------------------------
    def _request(self, messages: list[Message], schema: dict | None, options: Options) -> dict:
        opts: dict[str, Any] = {
            "temperature": options.temperature,
            "num_predict": options.max_tokens,
        }
        if options.seed is not None:
            opts["seed"] = options.seed
        if options.num_ctx:
            opts["num_ctx"] = options.num_ctx
        req: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "options": opts,
            "stream": False,
        }
        if schema is not None:
            req["format"] = schema
        return req

    def _reply(self, resp: Any) -> Reply:
        return Reply(
            text=resp.message.content or "",
            usage=Usage(
                prompt_tokens=resp.prompt_eval_count or 0,
                completion_tokens=resp.eval_count or 0,
            ),
            model=resp.model or self.model,
            backend=self.name,
        )

    def _translate(self, exc: BaseException, model: str | None = None) -> BaseException:
        import httpx

        ollama = _client_module()
        model = model or self.model
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            return BackendUnavailable(
                f"cannot reach Ollama at {public_url(self.host)}",
                hint="start it with `ollama serve` (or set OLLAMA_HOST to where it runs)",
            )
        if isinstance(exc, httpx.TimeoutException):
            return BackendTimeout(
                f"Ollama at {public_url(self.host)} did not answer within {self.timeout:.0f} s",
                hint="try a smaller model, or pass timeout=... to OllamaBackend",
            )
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404 or "not found" in str(exc.error).lower():
                return ModelNotFound(f"Ollama has no model {model!r}", hint=f"ollama pull {model}")
            if exc.status_code in (408, 429, 502, 503, 504):
                return BackendTimeout(f"Ollama is busy ({exc.status_code}): {exc.error}")
            return BackendError(f"Ollama error {exc.status_code}: {exc.error}")
        return exc

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        try:
            resp = self.client.chat(**self._request(messages, schema, options))
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._reply(resp)

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        client = self._loop_client(
            lambda: _client_module().AsyncClient(host=self.host, timeout=self.timeout)
        )
        try:
            resp = await client.chat(**self._request(messages, schema, options))
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._reply(resp)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            resp = self.client.embed(model=self.embed_model, input=list(texts))
        except Exception as exc:
            raise self._translate(exc, self.embed_model) from exc
        return [list(v) for v in resp.embeddings]

    def list_models(self) -> list[str]:
        try:
            resp = self.client.list()
        except Exception as exc:
            raise self._translate(exc) from exc
        return [m.model for m in resp.models]

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "host": public_url(self.host)}
