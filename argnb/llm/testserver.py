"""A small HTTP server that speaks the Ollama and OpenAI wire protocols over any argnb backend.

Why: no Ollama server can be installed on some machines (this project's CI among them), yet the
``OllamaBackend`` must be exercised through the official ``ollama`` client over real HTTP. This
server answers ``/api/chat`` (with ``format``; streamed as NDJSON unless ``"stream": false``, as
Ollama does), ``/api/tags``, ``/api/embed`` like Ollama, and ``/v1/chat/completions`` (streamed as
server-sent events with ``"stream": true``), ``/v1/models``, ``/v1/embeddings`` like an
OpenAI-compatible server, delegating the actual answer to an argnb backend (the embedded model, or
a scripted one that sleeps, for load tests). ``refuse_json_schema=True`` mimics llama.cpp's
server, which answers 500 to ``response_format`` json_schema; ``stream_usage`` says what it does
with ``stream_options.include_usage`` (``"send"``, ``"ignore"`` like llama.cpp, ``"refuse"``).

It also misbehaves on request, for tests of what a client does then: each entry of ``faults`` is
used up by one request (chat, embeddings, model listing), in order --

* ``"hang"``: read the request, never answer (until the server stops);
* ``"trickle"``: answer correctly, one byte every ``trickle_s`` seconds;
* ``"500"``: a bare internal error; ``"400"``: "model does not support" this request;
* ``"bad_json"``: HTTP 200 whose body is not JSON; ``"html"``: HTTP 200 with a web page.

    python -m argnb.llm.testserver --port 11434        # serve the embedded model as "smollm2-135m"
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from argnb.llm.base import Backend, Options
from argnb.llm.scripted import chunks_of

FAULTS = ("hang", "trickle", "500", "400", "bad_json", "html")


@dataclass
class _Stream:
    """A streamed answer: content type and the encoded pieces, sent with chunked encoding."""

    content_type: str
    pieces: Iterable[bytes]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class _Handler(BaseHTTPRequestHandler):
    server: ProtocolServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms stalls

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing -----------------------------------------------------------------------
    def _send(self, status: int, body: Any, ctype: str | None = None) -> None:
        data = self._encode(body)
        ctype = ctype or ("text/plain" if isinstance(body, str) else "application/json")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    @staticmethod
    def _encode(body: Any) -> bytes:
        return (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")

    def _send_stream(self, stream: _Stream) -> None:
        self.send_response(200)
        self.send_header("Content-Type", stream.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in stream.pieces:
            self.wfile.write(f"{len(piece):X}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def _key_ok(self, path: str) -> bool:
        """As llama.cpp's server with a key: an OpenAI route without it gets 401."""
        key = self.server.api_key
        if key is None or not path.startswith("/v1"):
            return True
        if self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
        return False

    def do_GET(self) -> None:
        routes = {
            "/": lambda: "Ollama is running",
            "/api/tags": self._tags,
            "/api/version": lambda: {"version": "0.0.0-argnb-testserver"},
            "/v1/models": self._models,
        }
        path = self.path.split("?")[0]
        fn = routes.get(path)
        if fn is None:
            self._send(404, {"error": "not found"})
            return
        if not self._key_ok(path):
            return
        fault = self.server.next_fault()
        if fault == "trickle":
            self._trickle(200, fn())
        elif fault:
            self._misbehave(fault, path.startswith("/v1"))
        else:
            self._send(200, fn())

    def do_POST(self) -> None:
        routes = {
            "/api/chat": self._ollama_chat,
            "/api/embed": self._ollama_embed,
            "/v1/chat/completions": self._openai_chat,
            "/v1/embeddings": self._openai_embed,
        }
        path = self.path.split("?")[0]
        fn = routes.get(path)
        if fn is None:
            self._send(404, {"error": "not found"})
            return
        body = self._body()
        if not self._key_ok(path):
            return
        self.server.requests.append((self.path, body))
        fault = self.server.next_fault()
        if fault in ("500", "400", "bad_json", "html", "hang"):
            self._misbehave(fault, path.startswith("/v1"))
            return
        answer = fn(body)
        if isinstance(answer, _Stream):
            self._send_stream(answer)
        elif fault == "trickle":
            self._trickle(*answer)
        else:
            self._send(*answer)

    # -- faults -------------------------------------------------------------------------
    def _misbehave(self, fault: str, openai: bool) -> None:
        if fault == "hang":
            self.server.stopping.wait(self.server.hang_s)
            self.close_connection = True
            return
        if fault in ("bad_json", "html"):
            page = "<html><body>Please log in to continue</body></html>"
            ctype = "application/json" if fault == "bad_json" else "text/html"
            self._send(200, page, ctype)
            return
        status = int(fault)
        text = "internal error" if status == 500 else "model does not support chat completions"
        err = {"message": text, "type": "server_error"} if openai else text
        self._send(status, {"error": err})

    def _trickle(self, status: int, body: Any) -> None:
        data = self._encode(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        for k in range(len(data)):
            if self.server.stopping.wait(self.server.trickle_s):
                break
            self.wfile.write(data[k : k + 1])
        self.close_connection = True

    # -- shared -------------------------------------------------------------------------
    def _known(self, model: str) -> bool:
        return model in self.server.models

    def _answer(self, messages: list[dict], schema: dict | None, opts: Options) -> Any:
        return self.server.engine.chat(messages, schema=schema, options=opts)

    def _chunks(self, messages: list[dict], schema: dict | None, opts: Options) -> Iterator[Any]:
        """Text chunks from the engine, then its Reply (a schema-bound answer is split here)."""
        if schema is not None:
            reply = self._answer(messages, schema, opts)
            yield from chunks_of(reply.text)
            yield reply
            return
        stream = self.server.engine.stream(messages, options=opts)
        yield from stream
        yield stream.reply

    # -- Ollama -------------------------------------------------------------------------
    def _tags(self) -> dict[str, Any]:
        now = _now()
        return {
            "models": [
                {
                    "name": m,
                    "model": m,
                    "modified_at": now,
                    "size": 0,
                    "digest": "0" * 64,
                    "details": {"format": "gguf", "family": "argnb-testserver"},
                }
                for m in self.server.models
            ]
        }

    def _ollama_missing(self, model: str) -> tuple[int, dict]:
        return 404, {"error": f"model '{model}' not found"}

    def _ollama_chat(self, body: dict) -> tuple[int, Any] | _Stream:
        model = body.get("model", "")
        if not self._known(model):
            return self._ollama_missing(model)
        o = body.get("options") or {}
        fmt = body.get("format")
        schema = fmt if isinstance(fmt, dict) else None
        opts = Options(
            temperature=o.get("temperature", 0.8),
            seed=o.get("seed"),
            max_tokens=o.get("num_predict", 512),
        )
        messages = body.get("messages", [])
        start = time.perf_counter_ns()
        if body.get("stream", True):  # Ollama streams unless told not to
            return _Stream(
                "application/x-ndjson", self._ollama_lines(model, messages, schema, opts)
            )
        r = self._answer(messages, schema, opts)
        return 200, self._ollama_done(model, r, r.text, time.perf_counter_ns() - start)

    def _ollama_done(self, model: str, r: Any, content: str, ns: int) -> dict:
        return {
            "model": model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": "stop",
            "total_duration": ns,
            "prompt_eval_count": r.usage.prompt_tokens,
            "eval_count": r.usage.completion_tokens,
        }

    def _ollama_lines(
        self, model: str, messages: list[dict], schema: dict | None, opts: Options
    ) -> Iterator[bytes]:
        start = time.perf_counter_ns()
        for item in self._chunks(messages, schema, opts):
            if isinstance(item, str):
                line = {
                    "model": model,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": item},
                    "done": False,
                }
            else:
                line = self._ollama_done(model, item, "", time.perf_counter_ns() - start)
            yield json.dumps(line).encode() + b"\n"

    def _ollama_embed(self, body: dict) -> tuple[int, Any]:
        model = body.get("model", "")
        if not self._known(model):
            return self._ollama_missing(model)
        inp = body.get("input", [])
        texts = [inp] if isinstance(inp, str) else list(inp)
        return 200, {"model": model, "embeddings": self.server.engine.embed(texts)}

    # -- OpenAI -------------------------------------------------------------------------
    def _models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": m, "object": "model", "owned_by": "argnb"} for m in self.server.models],
        }

    def _openai_error(self, status: int, message: str, kind: str) -> tuple[int, dict]:
        return status, {"error": {"message": message, "type": kind}}

    def _openai_chat(self, body: dict) -> tuple[int, Any] | _Stream:
        model = body.get("model", "")
        if not self._known(model):
            status, err = self._openai_error(
                404, f"The model `{model}` does not exist", "invalid_request_error"
            )
            err["error"]["code"] = "model_not_found"
            return status, err
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and self.server.refuse_json_schema:
            return self._openai_error(
                500, "response_format json_schema is not supported", "server_error"
            )
        stream = bool(body.get("stream"))
        if stream and "stream_options" in body and self.server.stream_usage == "refuse":
            return self._openai_error(
                400, "Unrecognized request argument supplied: stream_options", "invalid_request"
            )
        schema = None
        if fmt.get("type") == "json_schema":
            schema = fmt.get("json_schema", {}).get("schema")
        elif fmt.get("type") == "json_object":
            schema = fmt.get("schema") or {"type": "object"}
        opts = Options(
            temperature=body.get("temperature", 1.0),
            seed=body.get("seed"),
            max_tokens=body.get("max_tokens") or 512,
        )
        messages = body.get("messages", [])
        if stream:
            usage = (body.get("stream_options") or {}).get("include_usage")
            send_usage = bool(usage) and self.server.stream_usage == "send"
            return _Stream(
                "text/event-stream", self._sse(model, messages, schema, opts, send_usage)
            )
        r = self._answer(messages, schema, opts)
        return 200, {
            "id": f"chatcmpl-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": r.text},
                }
            ],
            "usage": self._openai_usage(r),
        }

    @staticmethod
    def _openai_usage(r: Any) -> dict[str, int]:
        return {
            "prompt_tokens": r.usage.prompt_tokens,
            "completion_tokens": r.usage.completion_tokens,
            "total_tokens": r.usage.total_tokens,
        }

    def _sse(
        self, model: str, messages: list[dict], schema: dict | None, opts: Options, usage: bool
    ) -> Iterator[bytes]:
        base = {
            "id": f"chatcmpl-{time.time_ns()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def event(choices: list, **extra: Any) -> bytes:
            return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode()

        yield event([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])
        for item in self._chunks(messages, schema, opts):
            if isinstance(item, str):
                yield event([{"index": 0, "delta": {"content": item}, "finish_reason": None}])
            else:
                yield event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
                if usage:
                    yield event([], usage=self._openai_usage(item))
        yield b"data: [DONE]\n\n"

    def _openai_embed(self, body: dict) -> tuple[int, Any]:
        model = body.get("model", "")
        if not self._known(model):
            return self._openai_error(
                404, f"The model `{model}` does not exist", "invalid_request_error"
            )
        inp = body.get("input", [])
        texts = [inp] if isinstance(inp, str) else list(inp)
        vecs = self.server.engine.embed(texts)
        return 200, {
            "object": "list",
            "model": model,
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }


class ProtocolServer(ThreadingHTTPServer):
    """Serve ``engine`` under the given model names on 127.0.0.1."""

    daemon_threads = True

    def __init__(
        self,
        engine: Backend,
        *,
        models: list[str] | None = None,
        port: int = 0,
        refuse_json_schema: bool = False,
        stream_usage: str = "send",
        faults: Iterable[str] = (),
        trickle_s: float = 1.0,
        hang_s: float = 60.0,
        api_key: str | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.api_key = api_key  # set: the OpenAI routes refuse (401) a request without it
        self.engine = engine
        self.models = models or [engine.model]
        self.refuse_json_schema = refuse_json_schema
        self.stream_usage = stream_usage
        self.faults = list(faults)
        self.trickle_s = trickle_s
        self.hang_s = hang_s  # a hanging handler gives up after this, or when the server stops
        self.stopping = threading.Event()
        self.requests: list[tuple[str, dict]] = []
        self._fault_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {FAULTS}")

    def next_fault(self) -> str | None:
        with self._fault_lock:
            return self.faults.pop(0) if self.faults else None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> ProtocolServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # hanging and trickling handlers end now
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout test, Ctrl-C) is normal here: no traceback on stderr,
        which a handler thread would otherwise print into whatever runs next."""
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        super().handle_error(request, client_address)

    def __enter__(self) -> ProtocolServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--port", type=int, default=11434)
    p.add_argument("--model", default="smollm2-135m", help="local model name or GGUF path")
    args = p.parse_args()
    from argnb.llm.local import LocalBackend

    srv = ProtocolServer(LocalBackend(args.model), port=args.port)
    print(f"serving {srv.models} at {srv.url} (Ollama /api and OpenAI /v1)", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
