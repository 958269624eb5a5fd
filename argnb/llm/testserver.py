"""A small HTTP server that speaks the Ollama and OpenAI wire protocols over any argnb backend.

Why: no Ollama server can be installed on some machines (this project's CI among them), yet the
``OllamaBackend`` must be exercised through the official ``ollama`` client over real HTTP. This
server answers ``/api/chat`` (with ``format``), ``/api/tags``, ``/api/embed`` like Ollama does,
and ``/v1/chat/completions``, ``/v1/models``, ``/v1/embeddings`` like an OpenAI-compatible server,
delegating the actual answer to an argnb backend (the embedded model, or a scripted one that
sleeps, for load tests). ``refuse_json_schema=True`` mimics llama.cpp's server, which answers
500 to ``response_format`` json_schema.

    python -m argnb.llm.testserver --port 11434        # serve the embedded model as "smollm2-135m"
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from argnb.llm.base import Backend, Options


class _Handler(BaseHTTPRequestHandler):
    server: ProtocolServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms stalls

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing -----------------------------------------------------------------------
    def _send(self, status: int, body: Any) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
        self.send_response(status)
        ctype = "text/plain" if isinstance(body, str) else "application/json"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self) -> None:
        routes = {
            "/": lambda: "Ollama is running",
            "/api/tags": self._tags,
            "/api/version": lambda: {"version": "0.0.0-argnb-testserver"},
            "/v1/models": self._models,
        }
        fn = routes.get(self.path.split("?")[0])
        self._send(200, fn()) if fn else self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        routes = {
            "/api/chat": self._ollama_chat,
            "/api/embed": self._ollama_embed,
            "/v1/chat/completions": self._openai_chat,
            "/v1/embeddings": self._openai_embed,
        }
        fn = routes.get(self.path.split("?")[0])
        if fn is None:
            self._send(404, {"error": "not found"})
            return
        self.server.requests.append((self.path, self._body_cache()))
        status, body = fn(self._last_body)
        self._send(status, body)

    def _body_cache(self) -> dict[str, Any]:
        self._last_body = self._body()
        return self._last_body

    # -- shared -------------------------------------------------------------------------
    def _known(self, model: str) -> bool:
        return model in self.server.models

    def _answer(self, model: str, messages: list[dict], schema: dict | None, opts: Options) -> Any:
        return self.server.engine.chat(messages, schema=schema, options=opts)

    # -- Ollama -------------------------------------------------------------------------
    def _tags(self) -> dict[str, Any]:
        now = datetime.now(timezone.utc).isoformat()
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

    def _ollama_chat(self, body: dict) -> tuple[int, Any]:
        model = body.get("model", "")
        if not self._known(model):
            return self._ollama_missing(model)
        if body.get("stream", True):
            return 400, {"error": "this test server supports stream=false only"}
        o = body.get("options") or {}
        fmt = body.get("format")
        schema = fmt if isinstance(fmt, dict) else None
        opts = Options(
            temperature=o.get("temperature", 0.8),
            seed=o.get("seed"),
            max_tokens=o.get("num_predict", 512),
        )
        start = time.perf_counter_ns()
        r = self._answer(model, body.get("messages", []), schema, opts)
        return 200, {
            "model": model,
            "created_at": datetime.now(timezone.utc).isoformat(),
            "message": {"role": "assistant", "content": r.text},
            "done": True,
            "done_reason": "stop",
            "total_duration": time.perf_counter_ns() - start,
            "prompt_eval_count": r.usage.prompt_tokens,
            "eval_count": r.usage.completion_tokens,
        }

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

    def _openai_missing(self, model: str) -> tuple[int, dict]:
        return 404, {
            "error": {
                "message": f"The model `{model}` does not exist",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        }

    def _openai_chat(self, body: dict) -> tuple[int, Any]:
        model = body.get("model", "")
        if not self._known(model):
            return self._openai_missing(model)
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and self.server.refuse_json_schema:
            return 500, {
                "error": {
                    "message": "response_format json_schema is not supported",
                    "type": "server_error",
                }
            }
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
        r = self._answer(model, body.get("messages", []), schema, opts)
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
            "usage": {
                "prompt_tokens": r.usage.prompt_tokens,
                "completion_tokens": r.usage.completion_tokens,
                "total_tokens": r.usage.total_tokens,
            },
        }

    def _openai_embed(self, body: dict) -> tuple[int, Any]:
        model = body.get("model", "")
        if not self._known(model):
            return self._openai_missing(model)
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
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.engine = engine
        self.models = models or [engine.model]
        self.refuse_json_schema = refuse_json_schema
        self.requests: list[tuple[str, dict]] = []
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> ProtocolServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
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
