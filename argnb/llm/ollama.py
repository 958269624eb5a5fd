"""OllamaBackend over the official ``ollama`` client.

Structured output uses Ollama's ``format=<JSON schema>``; streaming uses its newline-delimited JSON
(the last line carries the token counts), with the same ``format`` when a schema streams. The host comes from the argument, ``OLLAMA_HOST`` or the
client's default (http://127.0.0.1:11434). Errors are translated into ones that say what to run:
``ollama serve`` when nothing listens, ``ollama pull NAME`` when the model is missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from argnb.errors import (
    BackendError,
    BackendUnavailable,
    BadRequest,
    BadResponse,
    ModelNotFound,
    ServerError,
)
from argnb.llm.base import Backend, Message, Options, Reply, Usage, public_url


def _client_module() -> Any:
    import ollama

    return ollama


def _snippet(text: Any, n: int = 60) -> str:
    s = " ".join(str(text).split())
    return s[:n] + ("..." if len(s) > n else "")


class OllamaBackend(Backend):
    """Chat, streaming, embeddings and model listing against an Ollama server."""

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
            # per-read timeout; base.py enforces the total deadline
            self._sync = _client_module().Client(host=self.host, timeout=self.timeout)
        return self._sync

    def _prepare(self) -> None:
        _client_module()  # importing it can take seconds: not part of any timeout

    def _aclient(self) -> Any:
        return self._loop_client(
            lambda: _client_module().AsyncClient(host=self.host, timeout=self.timeout)
        )

    def structured_mode(self) -> str:
        return "format"

    def _where(self) -> str:
        return f"Ollama at {public_url(self.host)}"

    # -- request / response -------------------------------------------------------------
    def _request(
        self, messages: list[Message], schema: dict | None, options: Options, stream: bool = False
    ) -> dict:
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
            "stream": stream,
        }
        if schema is not None:
            req["format"] = schema
        return req

    def _usage(self, resp: Any) -> Usage:
        return Usage(
            prompt_tokens=resp.prompt_eval_count or 0,
            completion_tokens=resp.eval_count or 0,
        )

    def _reply(self, resp: Any) -> Reply:
        try:
            text = resp.message.content or ""
        except AttributeError:
            raise self._not_protocol(resp) from None
        return Reply(text=text, usage=self._usage(resp), model=resp.model or self.model)

    def _part(self, part: Any) -> Iterator[str | Reply]:
        """Text of one streamed line; the last line (``done``) also carries the counts."""
        text = getattr(getattr(part, "message", None), "content", None)
        if text:
            yield text
        if getattr(part, "done", False):
            yield Reply(text="", usage=self._usage(part), model=part.model or "")

    def _not_protocol(self, body: Any) -> BadResponse:
        return BadResponse(
            f"{self._where()} answered with something that is not an Ollama reply "
            f"({_snippet(body)!r})",
            hint="check the host: it must be an Ollama server (e.g. http://127.0.0.1:11434)",
        )

    def _translate(self, exc: BaseException, model: str | None = None) -> BaseException:
        import httpx
        import pydantic

        ollama = _client_module()
        model = model or self.model
        if isinstance(exc, BackendError):
            return exc
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            return BackendUnavailable(
                f"cannot reach Ollama at {public_url(self.host)}",
                hint="start it with `ollama serve` (or set OLLAMA_HOST to where it runs)",
            )
        if isinstance(exc, httpx.TimeoutException):
            return self._expired()
        if isinstance(exc, ollama.ResponseError):
            status, error = exc.status_code, _snippet(exc.error, 300)
            if status == 404 or "not found" in str(exc.error).lower():
                return ModelNotFound(f"Ollama has no model {model!r}", hint=f"ollama pull {model}")
            if status in (408, 429) or status >= 500 or status < 0:
                return ServerError(f"{self._where()} failed ({status}): {error}")
            return BadRequest(
                f"{self._where()} rejected the request ({status}): {error}",
                hint=f"check that {model!r} supports chat with these options (`ollama show MODEL`)",
            )
        if isinstance(exc, json.JSONDecodeError):
            return self._not_protocol(exc.doc)
        if isinstance(exc, pydantic.ValidationError):
            return self._not_protocol(exc)
        if isinstance(exc, httpx.HTTPError):
            return ServerError(f"{self._where()} broke off the reply: {_snippet(exc, 200)}")
        return exc

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        try:
            resp = self.client.chat(**self._request(messages, schema, options))
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._reply(resp)

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        try:
            resp = await self._aclient().chat(**self._request(messages, schema, options))
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._reply(resp)

    def _stream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> Iterator[str | Reply]:
        parts = None
        try:
            parts = self.client.chat(**self._request(messages, schema, options, stream=True))
            for part in parts:
                yield from self._part(part)
        except Exception as exc:
            raise self._translate(exc) from exc
        finally:
            if parts is not None:
                parts.close()

    async def _astream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> AsyncIterator[str | Reply]:
        parts = None
        try:
            parts = await self._aclient().chat(
                **self._request(messages, schema, options, stream=True)
            )
            async for part in parts:
                for item in self._part(part):
                    yield item
        except Exception as exc:
            raise self._translate(exc) from exc
        finally:
            if parts is not None:
                await parts.aclose()

    # -- other endpoints ----------------------------------------------------------------
    def _call(self, fn: Any, model: str | None = None) -> Any:
        try:
            return self._bounded(fn)
        except Exception as exc:
            raise self._translate(exc, model) from exc

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        resp = self._call(
            lambda: self.client.embed(model=self.embed_model, input=list(texts)), self.embed_model
        )
        try:
            return [list(v) for v in resp.embeddings]
        except (AttributeError, TypeError):
            raise self._not_protocol(resp) from None

    def list_models(self) -> list[str]:
        resp = self._call(self.client.list)
        try:
            return [m.model for m in resp.models]
        except (AttributeError, TypeError):
            raise self._not_protocol(resp) from None

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "host": public_url(self.host)}
