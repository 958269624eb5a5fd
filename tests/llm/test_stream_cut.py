"""A reply cut midway is named as such on both HTTP backends (issue 21, item 9).

A raw socket server answers 200 with one chunk of the reply and then closes the connection.
Before, the OpenAI backend said "cannot reach ... check base_url" -- the server had been reached.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest

from argnb.errors import BackendUnavailable, ServerError
from argnb.llm import Ledger, OllamaBackend, OpenAIBackend

CHUNK = {
    "openai": b"data: "
    + json.dumps(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "tiny",
            "choices": [{"index": 0, "delta": {"content": "Hello "}, "finish_reason": None}],
        }
    ).encode()
    + b"\n\n",
    "ollama": json.dumps(
        {
            "model": "tiny",
            "created_at": "2024-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "Hello "},
            "done": False,
        }
    ).encode()
    + b"\n",
}
CTYPE = {"openai": b"text/event-stream", "ollama": b"application/x-ndjson"}


def _serve(sock: socket.socket, kind: str) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    break
                data += got
            head, _, body = data.partition(b"\r\n\r\n")
            length = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")]
            want = int(length[0].split(b":")[1]) if length else 0
            while len(body) < want:
                body += conn.recv(65536)
            ev = CHUNK[kind]
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: " + CTYPE[kind] + b"\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
                + f"{len(ev):x}".encode()
                + b"\r\n"
                + ev
                + b"\r\n"
            )  # ... and never the closing chunk: the connection ends here


@pytest.fixture(params=["openai", "ollama"])
def cutting(request):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    threading.Thread(target=_serve, args=(sock, request.param), daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    yield request.param, url
    sock.close()


def _backend(kind: str, url: str):
    if kind == "openai":
        b = OpenAIBackend("tiny", base_url=url + "/v1", api_key="x", ledger=Ledger(), timeout=20)
    else:
        b = OllamaBackend("tiny", host=url, ledger=Ledger(), timeout=20)
    b._retry_args = lambda: {**type(b)._retry_args(b), "wait": lambda rs: 0}
    return b


def test_21_9_a_stream_cut_midway_says_the_reply_broke_off(cutting):
    kind, url = cutting
    b = _backend(kind, url)
    with pytest.raises(ServerError, match="broke off the reply") as exc:
        list(b.stream("hi"))
    assert "base_url" not in str(exc.value) and "cannot reach" not in str(exc.value)
    with pytest.raises(ServerError, match="broke off the reply"):
        b.chat("hi")


def test_a_closed_port_is_still_unreachable():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    b = _backend("openai", f"http://127.0.0.1:{port}")
    with pytest.raises(BackendUnavailable, match="cannot reach"):
        b.chat("hi")
