"""OpenAIBackend over the official ``openai`` client: OpenAI and any compatible server.

``base_url`` reaches vLLM, LM Studio, llama.cpp's server or Ollama's ``/v1``. Servers differ in
what structured output they accept, so we try, in order, ``response_format`` json_schema, then
``{"type": "json_object", "schema": ...}`` (llama.cpp's server answers 500 to json_schema but takes
this), then plain ``json_object``, then no response_format at all (the schema is still in the
prompt, and :mod:`argnb.llm.structured` validates). We move to the next mode only when the server
refuses the format itself (its error names the response format or the schema); any other error --
a transient 500, a 400 about something else -- leaves the mode alone. The mode in force is
:meth:`OpenAIBackend.structured_mode`.

Streaming uses server-sent events and asks for a final usage chunk
(``stream_options={"include_usage": true}``); servers that refuse that option are asked again
without it (and remembered), servers that ignore it leave the usage at 0. A streamed request
with a schema sends the ``response_format`` of the mode in force and steps down the same way.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from argnb.errors import (
    AllowanceUsed,
    AuthenticationError,
    BackendError,
    BackendUnavailable,
    BadRequest,
    BadResponse,
    ModelNotFound,
    SchemaUnsupported,
    ServerError,
)
from argnb.llm.base import Backend, Message, Options, Reply, Usage, public_url

MODES = ("json_schema", "json_object_schema", "json_object", "plain")
OPENAI_URL = "https://api.openai.com/v1"
#: words with which a server refuses the structured-output request itself
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.I)


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


def _broke_off(cause: BaseException | None) -> bool:
    """True for a transport error after the connection was made (a reply cut midway: httpx's
    RemoteProtocolError, ReadError), False for one that never reached the server."""
    names = {k.__name__ for k in type(cause).__mro__} if cause is not None else set()
    return bool(names & {"RemoteProtocolError", "ReadError", "WriteError"}) and not (
        names & {"ConnectError", "ConnectTimeout"}
    )


def _snippet(text: Any, n: int = 60) -> str:
    """The start of a body, on one line, for an error message."""
    s = " ".join(str(text).split())
    return s[:n] + ("..." if len(s) > n else "")


def _error_field(exc: Any, key: str) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    value = body.get(key) if isinstance(body, dict) else None
    return value if isinstance(value, str) else ""


def _error_type(exc: Any) -> str:
    """The ``type`` of an OpenAI-shaped error body (the class gateway names its refusals)."""
    return _error_field(exc, "type")


def _error_message(exc: Any) -> str:
    return _snippet(_error_field(exc, "message") or str(exc), 200)


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
        self.stream_usage = True  # ask for a usage chunk until a server refuses the option
        self._sync: Any = None

    def _make(self, cls_name: str) -> Any:
        import openai

        cls = getattr(openai, cls_name)
        # the client's own timeout is per read; base.py enforces the total deadline
        return cls(base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0)

    @property
    def client(self) -> Any:
        if self._sync is None:
            self._sync = self._make("OpenAI")
        return self._sync

    def _prepare(self) -> None:
        import openai  # noqa: F401  (seconds on a busy machine: not part of any timeout)

    def structured_mode(self) -> str:
        return self.mode

    def _where(self) -> str:
        return public_url(self.base_url)

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

    def _stream_request(
        self, messages: list[Message], options: Options, schema: dict | None = None, mode: str = ""
    ) -> dict:
        req = self._request(messages, schema, options, mode or self.mode)
        req["stream"] = True
        if self.stream_usage:
            req["stream_options"] = {"include_usage": True}
        return req

    def _usage(self, u: Any) -> Usage:
        details = getattr(u, "prompt_tokens_details", None)
        prompt = getattr(u, "prompt_tokens", 0) or 0
        reused = getattr(details, "cached_tokens", 0) or 0
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=getattr(u, "completion_tokens", 0) or 0,
            reused_tokens=reused
            if isinstance(reused, int) and isinstance(prompt, int) and 0 <= reused <= prompt
            else 0,
        )

    def _reply(self, resp: Any) -> Reply:
        try:
            text = resp.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            # the client hands back the raw text when the body was not JSON
            raise self._not_protocol(resp) from None
        return Reply(
            text=text,
            usage=self._usage(resp.usage),
            model=resp.model or self.model,
            backend=self.name,
        )

    def _not_protocol(self, body: Any) -> BadResponse:
        return BadResponse(
            f"{self._where()} answered with something that is not an OpenAI-style reply "
            f"({_snippet(body)!r})",
            hint="check base_url: it must be the API root of an OpenAI-compatible server "
            "(e.g. http://127.0.0.1:8000/v1), not a web page or a proxy's login",
        )

    def _chunk(self, chunk: Any) -> Iterator[str | Reply]:
        """Text and usage out of one streamed chunk (usage comes in a last, choice-less one)."""
        if not hasattr(chunk, "choices"):
            raise self._not_protocol(chunk)
        for choice in chunk.choices or ():
            text = getattr(choice.delta, "content", None)
            if text:
                yield text
        if getattr(chunk, "usage", None):
            yield Reply(text="", usage=self._usage(chunk.usage), model=chunk.model or "")

    def _translate(
        self, exc: BaseException, structured: bool, model: str | None = None
    ) -> BaseException:
        import openai

        model = model or self.model
        where = self._where()
        if isinstance(exc, BackendError):
            return exc
        if isinstance(exc, openai.APITimeoutError) or type(exc).__name__ in (
            "ReadTimeout",
            "WriteTimeout",
            "ConnectTimeout",
            "PoolTimeout",
        ):
            return self._expired()
        if isinstance(exc, openai.APIConnectionError) and _broke_off(exc.__cause__):
            # the server was reached and began to answer: not a wrong base_url
            return ServerError(f"{where} broke off the reply: {_snippet(exc.__cause__, 200)}")
        if isinstance(exc, openai.APIConnectionError):
            return BackendUnavailable(
                f"cannot reach an OpenAI-compatible server at {where}",
                hint="check base_url (e.g. http://127.0.0.1:11434/v1 for Ollama, "
                "http://127.0.0.1:8000/v1 for llama.cpp's server) and that the server runs",
            )
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return AuthenticationError(f"{where} refused the API key", hint="check OPENAI_API_KEY")
        if isinstance(exc, openai.NotFoundError):
            if "model" in str(exc).lower():
                return ModelNotFound(
                    f"{where} has no model {model!r}",
                    hint="list the models with `argnb doctor` and pass one of them",
                )
            return BackendUnavailable(
                f"{where} answered 404: is this the API root?", hint="base_url usually ends in /v1"
            )
        if isinstance(exc, openai.RateLimitError) and _error_type(exc) == "argnb_allowance":
            return AllowanceUsed(_error_message(exc))  # the class gateway's one line
        if isinstance(exc, openai.RateLimitError) and _error_type(exc) == "argnb_busy":
            # the gateway's own line: too many of this learner's requests under way
            return ServerError(_error_message(exc), hint="wait for your other requests")
        if isinstance(exc, openai.RateLimitError):
            return ServerError(f"rate limited by {where}", hint="wait, or lower --concurrency")
        if isinstance(exc, openai.APIStatusError):
            message = _snippet(exc.message, 300)
            refused = _FORMAT_WORDS.search(str(exc.message) + str(exc.body))
            if structured and exc.status_code in (400, 422, 500, 501) and refused:
                return SchemaUnsupported(
                    f"{where} refused structured mode {self.mode!r}: {message}"
                )
            if exc.status_code >= 500:
                return ServerError(f"{where} failed (HTTP {exc.status_code}): {message}")
            return BadRequest(
                f"{where} rejected the request (HTTP {exc.status_code}): {message}",
                hint="check that the model supports chat completions with these options",
            )
        if isinstance(exc, json.JSONDecodeError):
            return self._not_protocol(exc.doc)
        if isinstance(exc, openai.APIResponseValidationError):
            return self._not_protocol(exc.body)
        if isinstance(exc, openai.APIError) or type(exc).__module__.startswith("httpx"):
            # an error event inside a stream, or the connection broke off mid-reply
            return ServerError(f"{where} broke off the reply: {_snippet(exc, 200)}")
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
            except BadResponse:
                raise
            except Exception as exc:
                self._fallback_or_raise(exc, mode, schema)

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        client = self._loop_client(lambda: self._make("AsyncOpenAI"))
        while True:
            mode = self.mode
            try:
                req = self._request(messages, schema, options, mode)
                return self._reply(await client.chat.completions.create(**req))
            except BadResponse:
                raise
            except Exception as exc:
                self._fallback_or_raise(exc, mode, schema)

    # -- streaming ----------------------------------------------------------------------
    def _refused_stream_usage(self, exc: BaseException) -> bool:
        """A 400/422 naming ``stream_options``: ask again without it, from now on."""
        import openai

        if (
            self.stream_usage
            and isinstance(exc, openai.APIStatusError)
            and exc.status_code in (400, 422)
            and "stream_options" in str(exc.message) + str(exc.body)
        ):
            self.stream_usage = False
            return True
        return False

    def _open(self, messages: list[Message], options: Options, schema: dict | None) -> Any:
        while True:
            mode = self.mode
            try:
                return self.client.chat.completions.create(
                    **self._stream_request(messages, options, schema, mode)
                )
            except Exception as exc:
                if not self._refused_stream_usage(exc):
                    self._fallback_or_raise(exc, mode, schema)

    def _check_events(self, stream: Any, body: Any = None) -> None:
        """A stream request answered with something other than server-sent events."""
        response = getattr(stream, "response", None)
        ctype = response.headers.get("content-type", "") if response is not None else ""
        if "event-stream" not in ctype:
            raise self._not_protocol(body if body is not None else ctype or "no events")

    def _stream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> Iterator[str | Reply]:
        stream = self._open(messages, options, schema)
        try:
            if "event-stream" not in stream.response.headers.get("content-type", ""):
                self._check_events(stream, stream.response.read().decode("utf-8", "replace"))
            for chunk in stream:
                yield from self._chunk(chunk)
        except BackendError:
            raise
        except Exception as exc:
            raise self._translate(exc, False) from exc
        finally:
            stream.close()

    async def _astream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> AsyncIterator[str | Reply]:
        client = self._loop_client(lambda: self._make("AsyncOpenAI"))
        while True:
            mode = self.mode
            try:
                stream = await client.chat.completions.create(
                    **self._stream_request(messages, options, schema, mode)
                )
                break
            except Exception as exc:
                if not self._refused_stream_usage(exc):
                    self._fallback_or_raise(exc, mode, schema)
        try:
            if "event-stream" not in stream.response.headers.get("content-type", ""):
                body = await stream.response.aread()
                self._check_events(stream, body.decode("utf-8", "replace"))
            async for chunk in stream:
                for item in self._chunk(chunk):
                    yield item
        except BackendError:
            raise
        except Exception as exc:
            raise self._translate(exc, False) from exc
        finally:
            await stream.close()

    # -- other endpoints ----------------------------------------------------------------
    def _call(self, fn: Any, model: str | None = None) -> Any:
        """One non-chat request within the deadline, its errors translated."""
        try:
            return self._bounded(fn)
        except BackendError:
            raise
        except AttributeError as exc:  # the client's own parsing of a body that was not JSON
            raise self._not_protocol(exc) from exc
        except Exception as exc:
            raise self._translate(exc, False, model) from exc

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        resp = self._call(
            lambda: self.client.embeddings.create(model=self.embed_model, input=list(texts)),
            self.embed_model,
        )
        try:
            return [list(d.embedding) for d in resp.data]
        except (AttributeError, TypeError):
            raise self._not_protocol(resp) from None

    def list_models(self) -> list[str]:
        page = self._call(self.client.models.list)
        try:
            return [m.id for m in page]
        except (AttributeError, TypeError):
            raise self._not_protocol(page) from None

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "base_url": public_url(self.base_url)}
