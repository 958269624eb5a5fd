"""Greedy decoding under a grammar without checking the whole vocabulary at every token.

llama-cpp-python applies a JSON schema's grammar to all ~49,000 candidate tokens before it
picks the best one; on one CPU thread that check cost more than the model's own forward pass
(SmolLM2-135M: ~25 ms a token against ~20 ms). At temperature 0 the answer is the highest
scoring token the grammar allows, so :class:`GreedyGrammarSampler` asks the grammar about the
best token alone first and checks every token only when the grammar refuses it -- the order
llama.cpp's own ``common_sampler`` uses. The token chosen is the same either way (ties go to
the lowest id, as llama.cpp's greedy sampler does); ``tests/llm/test_sampling.py`` holds that
against the plain chain.

The embedded model gets it through ``argnb.llm.local``; a class's model server gets it by
running ``python -m argnb.llm.sampling`` (llama-cpp-python's server, arguments unchanged, with
:func:`install` done first).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np


def choose(original: Callable[..., Any], llama_cpp: Any, llm: Any, args: tuple, kw: dict) -> Any:
    """The sampler for one request: :class:`GreedyGrammarSampler` for greedy decoding under a
    grammar, else llama-cpp-python's own (``original``, its ``Llama._init_sampler``)."""
    grammar = kw.get("grammar")
    plain = kw.get("logits_processor") is None and not kw.get("mirostat_mode")
    if not args and grammar is not None and kw.get("temp") == 0.0 and plain:
        return GreedyGrammarSampler(
            llama_cpp, llm, grammar, kw.get("repeat_penalty", 1.0),
            kw.get("frequency_penalty", 0.0), kw.get("presence_penalty", 0.0),
        )  # fmt: skip
    return original(llm, *args, **kw)


def install(llama_cpp: Any) -> None:
    """Every ``Llama`` of this process samples through :func:`choose` (the model server's)."""
    cls = llama_cpp.Llama
    if getattr(cls, "_argnb_greedy_grammar", False):
        return
    original = cls._init_sampler

    def _init_sampler(self: Any, *args: Any, **kw: Any) -> Any:
        return choose(original, llama_cpp, self, args, kw)

    cls._init_sampler = _init_sampler
    cls._argnb_greedy_grammar = True


class GreedyGrammarSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` chain [penalties, grammar, greedy].

    ``sample(ctx, idx)`` returns the chosen token and tells both samplers about it, as
    ``llama_sampler_sample`` does for a chain.
    """

    def __init__(self, llama_cpp: Any, llm: Any, grammar: Any, repeat_penalty: float,
                 frequency_penalty: float, presence_penalty: float) -> None:  # fmt: skip
        self._lib = llama_cpp
        self.n_vocab = int(llm._n_vocab)
        self.penalties = llama_cpp.llama_sampler_init_penalties(
            self.n_vocab, llm.last_n_tokens_size, repeat_penalty, frequency_penalty,
            presence_penalty,
        )  # fmt: skip
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            llama_cpp.llama_sampler_free(self.penalties)
            raise ValueError("llama.cpp refused the grammar")
        self._data = (llama_cpp.llama_token_data * self.n_vocab)()
        view = np.ctypeslib.as_array(self._data)  # structured: id, logit, p
        self._ids, self._logits, self._p = view["id"], view["logit"], view["p"]
        self._all = llama_cpp.llama_token_data_array(
            data=self._data, size=self.n_vocab, selected=-1, sorted=False
        )
        self._one_data = (llama_cpp.llama_token_data * 1)()
        self._one = llama_cpp.llama_token_data_array(
            data=self._one_data, size=1, selected=-1, sorted=False
        )
        self.tokens = self.refused = 0  # tokens chosen; of them, after checking every token

    def sample(self, ctx: Any, idx: int = -1) -> int:
        lib = self._lib
        ptr = lib.llama_get_logits_ith(ctx.ctx, idx)
        self._ids[:] = np.arange(self.n_vocab, dtype=np.int32)
        self._logits[:] = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))
        self._p[:] = 0.0
        self._all.size, self._all.selected, self._all.sorted = self.n_vocab, -1, False
        lib.llama_sampler_apply(self.penalties, ctypes.byref(self._all))
        token = int(np.argmax(self._logits))
        one = self._one_data[0]
        one.id, one.logit, one.p = token, float(self._logits[token]), 0.0
        self._one.size, self._one.selected, self._one.sorted = 1, -1, False
        lib.llama_sampler_apply(self.grammar, ctypes.byref(self._one))
        if not np.isfinite(one.logit):  # refused: ask about every token, as the chain does
            lib.llama_sampler_apply(self.grammar, ctypes.byref(self._all))
            token = int(np.argmax(self._logits))
            self.refused += 1
        self.tokens += 1
        lib.llama_sampler_accept(self.penalties, token)
        lib.llama_sampler_accept(self.grammar, token)
        return token

    def close(self) -> None:
        for name in ("penalties", "grammar"):
            smpl = getattr(self, name, None)
            if smpl:
                self._lib.llama_sampler_free(smpl)
                setattr(self, name, None)

    def __del__(self) -> None:
        self.close()


def main() -> None:
    """llama-cpp-python's OpenAI-compatible server with :func:`install` done first."""
    import llama_cpp
    from llama_cpp.server.__main__ import main as serve

    install(llama_cpp)
    serve()


if __name__ == "__main__":
    main()
