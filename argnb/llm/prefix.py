"""Reusing the KV cache of a shared prompt prefix without changing one byte of the output.

Every fallacy item sends the same long instructions and examples followed by a short argument, so
most of each prompt was already evaluated for the previous item. llama.cpp's own prefix reuse
changes the output, though: its floating-point results depend on how a prompt is cut into
batches, and reusing 461 cached tokens then evaluating the rest in one batch cuts it differently
from a cold run. A lesson must give the same answer on every re-run, so we make both runs cut the
prompt identically:

* every prompt is evaluated in blocks aligned at absolute positions ``0, B, 2B, ...``
  (``B = n_batch = n_ubatch``; a cold run does exactly that anyway);
* only whole aligned blocks of a common prefix are reused, restored from a saved KV state into
  the same cells a cold run would fill, and the rest is evaluated block by block from there;
* at least the prompt's last block is always evaluated, so the logits come from a live decode.

A warm run therefore computes the very same blocks on the very same cache contents as a cold one;
``tests/llm/test_prefix_cache.py`` checks the outputs byte for byte over many prompts. Nothing
here imports llama_cpp at module level: :class:`RequestHook` is handed the module.
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class _State:
    data: Any  # a ctypes uint8 array: llama_state_seq_get_data's copy of sequence 0
    size: int


class PrefixStore:
    """Saved KV states of aligned prompt prefixes for one llama.cpp context (LRU, byte budget).

    Several prefixes live side by side because callers alternate between prompts (an ensemble
    asks a zero-shot and a few-shot member about each item).
    """

    def __init__(self, block: int, max_bytes: int = 128 << 20) -> None:
        self.block = block
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], _State] = OrderedDict()
        self._lock = threading.Lock()
        #: prompt tokens restored from a saved state vs evaluated, over the store's life
        self.reused_tokens = 0
        self.evaluated_tokens = 0

    def __len__(self) -> int:
        return len(self._states)

    @property
    def nbytes(self) -> int:
        return sum(s.size for s in self._states.values())

    def best(self, tokens: Sequence[int], limit: int) -> tuple[tuple[int, ...] | None, int]:
        """The saved prefix to restore for ``tokens`` and how many tokens of it to keep: whole
        blocks only, at most ``limit``."""
        best_key, best_n = None, 0
        with self._lock:
            for key in self._states:
                n = min(common_prefix(key, tokens) // self.block * self.block, limit)
                if n > best_n:
                    best_key, best_n = key, n
        return best_key, best_n

    def get(self, key: tuple[int, ...]) -> _State:
        with self._lock:
            self._states.move_to_end(key)
            return self._states[key]

    def put(self, key: tuple[int, ...], state: _State) -> None:
        with self._lock:
            self._states[key] = state
            self._states.move_to_end(key)
            total = sum(s.size for s in self._states.values())
            while len(self._states) > 1 and total > self.max_bytes:
                _, old = self._states.popitem(last=False)
                total -= old.size

    def clear(self) -> None:
        with self._lock:
            self._states.clear()


class RequestHook:
    """Steers the evaluations of one request on a llama.cpp model (see the module docstring).

    Installed as ``llm.request_hook`` while a request runs; the model's ``eval`` hands every call
    to it. The first call carries the whole prompt (the request starts from a reset context); later
    calls feed back one generated token each, which we only count (llama-cpp-python reports no
    usage for streamed replies).
    """

    def __init__(self, llama_cpp: Any, store: PrefixStore | None, block: int) -> None:
        self._lib = llama_cpp
        self.store = store
        self.block = block
        self.prompt_tokens = 0
        self.reused = 0
        self.fed_back = 0
        self._first = True

    def __call__(self, llm: Any, tokens: Sequence[int], evaluate: Callable[[Any], None]) -> None:
        if not self._first:
            self.fed_back += len(tokens)
            evaluate(tokens)
            return
        self._first = False
        tokens = list(tokens)
        self.prompt_tokens = len(tokens)
        if llm.n_tokens != 0:  # not a fresh request: never guess, evaluate as given
            evaluate(tokens)
            return
        # the start of the last block: always evaluated, so sampling sees fresh logits
        last = (len(tokens) - 1) // self.block * self.block
        start = self._restore(llm, tokens, last) if self.store is not None else 0
        self.reused = start
        evaluate(tokens[start:last])  # whole aligned blocks (start is a block boundary)
        if self.store is not None:
            self.store.reused_tokens += start
            self.store.evaluated_tokens += len(tokens) - start
            if last > start:
                self.store.put(tuple(tokens[:last]), self._save(llm))
        evaluate(tokens[last:])

    def _restore(self, llm: Any, tokens: list[int], limit: int) -> int:
        """Load the best saved prefix into the cells a cold run would use; tokens restored."""
        assert self.store is not None
        key, n = self.store.best(tokens, limit)
        if key is None or n == 0:
            return 0
        state = self.store.get(key)
        lib = self._lib
        lib.llama_memory_clear(lib.llama_get_memory(llm.ctx), False)
        if lib.llama_state_seq_set_data(llm.ctx, state.data, state.size, 0) != state.size:
            llm.reset()  # could not load: fall back to a cold run (eval clears the cells)
            return 0
        llm.input_ids[:n] = tokens[:n]
        llm.n_tokens = n  # eval drops the restored cells from position n on
        return n

    def _save(self, llm: Any) -> _State:
        lib = self._lib
        size = lib.llama_state_seq_get_size(llm.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = lib.llama_state_seq_get_data(llm.ctx, buf, size, 0)
        return _State(buf, int(n))
