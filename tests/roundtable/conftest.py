"""Fixtures for roundtable tests: scripted tables and a backend that streams."""

from __future__ import annotations

from typing import Any

import pytest

from argnb.llm.base import Options, Reply, to_messages
from argnb.llm.scripted import ScriptedBackend
from argnb.roundtable.session import Session
from argnb.roundtable.testing import table_backend


class _Stream:
    """What ``Backend.astream`` returns: async chunks, then ``.reply``."""

    def __init__(self, gen) -> None:
        self._gen = gen
        self.reply: Reply | None = None

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        return await self._gen.__anext__()


class StreamingScripted(ScriptedBackend):
    """A scripted backend with ``astream``: the reply arrives word by word."""

    def astream(self, messages: Any, *, options: Options | None = None) -> _Stream:
        async def gen():
            reply = await self.achat(to_messages(messages), options=options)
            words = reply.text.split(" ")
            for i, w in enumerate(words):
                yield w if i == len(words) - 1 else w + " "
            stream.reply = reply

        stream = _Stream(gen())
        return stream


@pytest.fixture
def make_session():
    """``make_session(**kw)``: a scripted table (two deliberators, an analyzer, human Ann)."""

    def make(**kw: Any) -> Session:
        defaults: dict[str, Any] = {
            "moderator": table_backend(),
            "deliberators": [table_backend(), table_backend()],
            "analyzer": table_backend(),
            "human": "Ann",
            "turns": 6,
            "analyze_every": 3,
        }
        topic = kw.pop("topic", "Should phones be allowed in class?")
        defaults.update(kw)
        return Session(topic, **defaults)

    return make
