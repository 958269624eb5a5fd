"""Prefix reuse in the embedded model: outputs byte-identical to a cold run, and real reuse."""

from __future__ import annotations

import random

import pytest
from pydantic import BaseModel, Field

from argnb.llm import Ledger, LocalBackend, Options
from argnb.llm.prefix import PrefixStore, RequestHook, common_prefix


# -- the block logic, on a fake model (fast) ---------------------------------------------------
class FakeLib:
    """Stands in for llama_cpp's state functions: a 'state' is the list of cached tokens."""

    def __init__(self, model: FakeLlama) -> None:
        self.model = model
        self.fail_restore = False

    def llama_get_memory(self, ctx):
        return None

    def llama_memory_clear(self, mem, data):
        self.model.cells = []

    def llama_state_seq_get_size(self, ctx, seq):
        return len(self.model.cells)

    def llama_state_seq_get_data(self, ctx, buf, size, seq):
        buf[:] = self.model.cells  # a ctypes array: element-wise copy
        return size

    def llama_state_seq_set_data(self, ctx, buf, size, seq):
        if self.fail_restore:
            return 0
        self.model.cells = list(buf[:size])
        return size


class FakeLlama:
    """Records the batches a cold or warm request evaluates, as (first position, tokens)."""

    ctx = None

    def __init__(self, block: int) -> None:
        self.n_batch = block
        self.n_tokens = 0
        self.input_ids = [0] * 4096
        self.cells: list[int] = []
        self.batches: list[tuple[int, tuple[int, ...]]] = []

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens) -> None:  # llama-cpp-python's loop, minus the maths
        self.cells = self.cells[: self.n_tokens]
        for i in range(0, len(tokens), self.n_batch):
            batch = tuple(tokens[i : i + self.n_batch])
            self.batches.append((self.n_tokens, batch))
            self.cells += batch
            self.n_tokens += len(batch)


def _request(llm: FakeLlama, lib: FakeLib, store: PrefixStore | None, prompt: list[int]):
    llm.reset()
    llm.batches = []
    hook = RequestHook(lib, store, llm.n_batch)
    hook(llm, prompt, llm.eval)
    return hook, llm.batches


@pytest.mark.parametrize("block", [4, 8, 64])
def test_warm_requests_evaluate_exactly_the_tail_blocks_of_a_cold_run(block):
    rng = random.Random(block)
    prefixes = [[rng.randrange(1, 50) for _ in range(n)] for n in (3, 29, 70, 130)]
    prompts = [p + [rng.randrange(50, 99) for _ in range(rng.randrange(1, 90))] for p in prefixes]
    prompts += [prompts[2], prompts[2][: 2 * block], prompts[3][: 3 * block + 1]]
    rng.shuffle(prompts)
    warm, cold = FakeLlama(block), FakeLlama(block)
    lib = FakeLib(warm)
    store = PrefixStore(block)
    reused = 0
    for prompt in prompts:
        hook, warm_batches = _request(warm, lib, store, prompt)
        _, cold_batches = _request(cold, FakeLib(cold), None, prompt)
        assert all(start % block == 0 for start, _ in cold_batches)
        # a warm run computes a suffix of the cold run's blocks, each one identical
        assert warm_batches == cold_batches[len(cold_batches) - len(warm_batches) :]
        assert warm_batches, "the last block is always evaluated (fresh logits)"
        assert warm.cells == cold.cells == prompt  # the cache holds the same tokens, in order
        assert hook.reused % block == 0 and hook.prompt_tokens == len(prompt)
        reused += hook.reused
    assert reused > 0 and store.reused_tokens == reused


def test_a_state_that_fails_to_load_falls_back_to_a_cold_run():
    llm, store = FakeLlama(4), PrefixStore(4)
    lib = FakeLib(llm)
    prompt = list(range(1, 20))
    _request(llm, lib, store, prompt)
    lib.fail_restore = True
    hook, batches = _request(llm, lib, store, prompt)
    assert hook.reused == 0 and batches[0][0] == 0 and llm.cells == prompt


def test_store_prefers_the_longest_whole_block_match_and_keeps_a_byte_budget():
    from argnb.llm.prefix import _State

    store = PrefixStore(block=4, max_bytes=10)
    store.put((1, 2, 3, 4, 5, 6, 7, 8), _State(None, 4))
    store.put((1, 2, 3, 4, 9, 9, 9, 9), _State(None, 4))
    assert store.best([1, 2, 3, 4, 5, 6, 7, 0], limit=100) == ((1, 2, 3, 4, 5, 6, 7, 8), 4)
    assert store.best([1, 2, 3, 4, 5, 6, 7, 8, 1], limit=100)[1] == 8
    assert store.best([1, 2, 3, 4, 5, 6, 7, 8, 1], limit=4)[1] == 4
    assert store.best([2], limit=100) == (None, 0)
    store.put((7, 7, 7, 7), _State(None, 4))  # 12 bytes > 10: the least recently used goes
    assert len(store) == 2 and store.nbytes == 8
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2


# -- the real model ----------------------------------------------------------------------------
class Verdict(BaseModel):
    fallacious: bool
    reason: str = Field(max_length=60)


SYSTEMS = [
    "You check arguments for faulty reasoning. A fallacy is an argument whose premises do not "
    "support its conclusion: hasty generalisation, appeal to popularity, slippery slope, false "
    "dilemma, ad hominem, circular reasoning. Answer in one short sentence.",
    "You are a debate coach. Read the student's argument, name its main claim and say whether the "
    "reasons given support it. Be brief and kind.",
]
EXAMPLES = [
    ("Everyone at my school uses this app, so it must be safe.", "Fallacious: popularity."),
    ("The bridge was inspected last week and passed, so it is safe to cross.", "Sound."),
    ("If we allow one late essay, soon nobody will hand anything in on time.", "Slippery slope."),
]
CLAIMS = [
    "Cats are better pets than dogs because my cat is quiet.",
    "We should plant more trees in the city since they cool the streets in summer.",
    "My uncle smoked and lived to ninety, so smoking is harmless.",
    "The new timetable saves two minutes, but the stop is further away, so it helps nobody.",
    "Either we ban cars from the centre or the air will never be clean.",
    "She is not a scientist, so her point about the budget is wrong.",
    "Prices rose after the new mayor took office; the mayor caused inflation.",
    "Reading every day improves vocabulary, as the class survey showed.",
]


def _prompts(n: int = 26) -> list[list[dict]]:
    """Prompts in families sharing long prefixes (system + few-shot turns), with tails of many
    lengths (some identical prompts too), shuffled so families interleave."""
    rng = random.Random(7)
    out = []
    for k in range(n):
        system = SYSTEMS[k % 2]
        msgs = [{"role": "system", "content": system}]
        for text, verdict in EXAMPLES[: k % 4]:
            msgs += [{"role": "user", "content": text}, {"role": "assistant", "content": verdict}]
        claim = CLAIMS[rng.randrange(len(CLAIMS))]
        tail = " ".join(rng.choice(CLAIMS).split()[: rng.randrange(0, 12)])
        msgs.append({"role": "user", "content": f"Argument: {claim} {tail}".strip()})
        out.append(msgs)
    out += out[:3]  # exact repeats: everything but the last block comes from a saved state
    rng.shuffle(out)
    return out


@pytest.mark.model
@pytest.mark.full  # make test-all only (docs/testing.md)
def test_prefix_cache_gives_byte_identical_outputs_to_cold_runs(local):
    warm = LocalBackend(prefix_cache=True, ledger=Ledger())
    cold = LocalBackend(prefix_cache=False, ledger=Ledger())
    assert warm.llm is cold.llm == local.llm  # one model: only the cache use differs
    store = warm.llm.prefix_store
    store.clear()
    reused0, evaluated0 = store.reused_tokens, store.evaluated_tokens
    opts = Options(max_tokens=16)
    prompts = _prompts()
    schemas = [None, Verdict.model_json_schema()]
    reported = 0
    for k, msgs in enumerate(prompts):
        schema = schemas[k % 2]
        w = warm.chat(msgs, schema=schema, options=opts)
        c = cold.chat(msgs, schema=schema, options=opts)
        assert w.text == c.text, f"prompt {k}: warm {w.text!r} != cold {c.text!r}"
        assert w.usage.model_copy(update={"reused_tokens": 0}) == c.usage
        assert c.usage.reused_tokens == 0 and c.usage.evaluated_tokens == c.usage.prompt_tokens
        reported += w.usage.reused_tokens
    reused = store.reused_tokens - reused0
    evaluated = store.evaluated_tokens - evaluated0
    assert len(prompts) >= 29
    assert reused > evaluated, f"only {reused} of {reused + evaluated} prompt tokens reused"
    assert reported == reused  # each reply says what it reused (Usage.reused_tokens)


@pytest.mark.model
def test_prefill_reads_a_request_ahead_and_its_reply_stays_byte_identical(local):
    """What the roundtable does while the learner types: read a request up to the learner's
    line; the request then restores all of it but the last part block and answers the same."""
    head = [
        {"role": "system", "content": SYSTEMS[0]},
        {"role": "user", "content": " ".join(CLAIMS) + "\n\n## Your task\nJudge the claims."},
    ]
    msgs = [*head, {"role": "user", "content": CLAIMS[2]}]
    opts = Options(max_tokens=16)
    schema = Verdict.model_json_schema()
    warm = LocalBackend(prefix_cache=True, ledger=Ledger())
    cold = LocalBackend(prefix_cache=False, ledger=Ledger())
    warm.llm.prefix_store.clear()
    assert cold.prefill(head) == 0 and len(warm.llm.prefix_store) == 0  # reuse off: nothing
    kept = warm.prefill(head)
    assert kept >= 64 and kept % 64 == 0 and len(warm.llm.prefix_store) == 1
    assert warm.ledger.calls() == 0  # not a request of anyone's: nothing in the ledger
    w = warm.chat(msgs, schema=schema, options=opts)
    c = cold.chat(msgs, schema=schema, options=opts)
    assert w.text == c.text
    assert w.usage.reused_tokens == kept  # read ahead, restored whole
    assert w.usage.prompt_tokens - kept < 64 + 40  # left: part of a block, the line, the header


@pytest.mark.model
def test_streamed_local_reply_equals_the_plain_call_and_counts_tokens(local):
    msgs = [{"role": "system", "content": SYSTEMS[0]}, {"role": "user", "content": CLAIMS[2]}]
    for max_tokens in (40, 5):  # ends on end-of-text / on the token limit
        opts = Options(max_tokens=max_tokens)
        plain = LocalBackend(ledger=Ledger()).chat(msgs, options=opts)
        s = LocalBackend(ledger=Ledger()).stream(msgs, options=opts)
        chunks = list(s)
        assert len(chunks) > 1 and "".join(chunks) == plain.text == s.reply.text
        same = {"reused_tokens": 0}  # the second call may reuse the first one's prefix
        assert s.reply.usage.model_copy(update=same) == plain.usage.model_copy(update=same)
        assert 0 < s.reply.first_chunk_s < s.reply.latency_s


def test_argnb_prefix_cache_switches_reuse_for_every_local_backend(monkeypatch):
    from argnb.errors import ArgnbError
    from argnb.llm.local import default_prefix_cache

    monkeypatch.delenv("ARGNB_PREFIX_CACHE", raising=False)
    assert default_prefix_cache() is True
    for off in ("0", "off", " False "):
        monkeypatch.setenv("ARGNB_PREFIX_CACHE", off)
        assert default_prefix_cache() is False
        assert LocalBackend(ledger=Ledger()).prefix_cache is False  # nothing loaded yet
        assert LocalBackend(prefix_cache=True, ledger=Ledger()).prefix_cache is True
    monkeypatch.setenv("ARGNB_PREFIX_CACHE", "1")
    assert LocalBackend(ledger=Ledger()).prefix_cache is True
    monkeypatch.setenv("ARGNB_PREFIX_CACHE", "maybe")
    with pytest.raises(ArgnbError, match="ARGNB_PREFIX_CACHE must be 0 or 1"):
        LocalBackend(ledger=Ledger())


def test_openai_usage_reports_reused_tokens_and_ignores_lies():
    from types import SimpleNamespace as NS

    from argnb.llm.openai import OpenAIBackend

    usage = OpenAIBackend._usage
    u = usage(
        None,
        NS(prompt_tokens=900, completion_tokens=5, prompt_tokens_details=NS(cached_tokens=768)),
    )
    assert (u.prompt_tokens, u.reused_tokens, u.evaluated_tokens) == (900, 768, 132)
    assert usage(None, NS(prompt_tokens=9, completion_tokens=1)).reused_tokens == 0
    for lie in (10_000, -3, "768", None):
        d = NS(cached_tokens=lie)
        assert (
            usage(
                None, NS(prompt_tokens=900, completion_tokens=1, prompt_tokens_details=d)
            ).reused_tokens
            == 0
        )


def test_threads_come_from_argnb_threads_or_half_the_usable_cpus(monkeypatch):
    from argnb.errors import ArgnbError
    from argnb.llm.local import default_threads, usable_cpus

    monkeypatch.delenv("ARGNB_THREADS", raising=False)
    assert default_threads() == max(1, min(8, usable_cpus() // 2))
    monkeypatch.setenv("ARGNB_THREADS", "3")
    assert default_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("ARGNB_THREADS", bad)
        with pytest.raises(ArgnbError, match="ARGNB_THREADS"):
            default_threads()


def test_a_schema_note_ends_a_context_first_task_so_the_shared_prefix_survives():
    from argnb.llm.base import Message
    from argnb.llm.structured import with_instructions
    from argnb.prompts import context_first

    system = Message(role="system", content="One team.")
    asked = {}
    for name, schema in (("judge", Verdict.model_json_schema()), ("plain", {"type": "object"})):
        user = Message(role="user", content=context_first("Motion: tea.", f"Task of {name}."))
        asked[name] = with_instructions([system, user], schema)
    assert asked["judge"][0] == asked["plain"][0] == system  # the system text is untouched
    assert asked["judge"][1].content.startswith("Motion: tea.\n\n## Your task\nTask of judge.")
    assert asked["judge"][1].content.endswith('"title":"Verdict","type":"object"}')
    # a rule repair asks again after the answer: the note stays where the first attempt had it
    again = [
        system,
        user,
        Message(role="assistant", content="{}"),
        Message(role="user", content="Fix it."),
    ]
    repaired = with_instructions(again, {"type": "object"})
    assert repaired[:2] == asked["plain"] and repaired[2:] == again[2:]
    # a prompt without the task line keeps the note in the system message, as before
    old = with_instructions([system, Message(role="user", content="Hi")], {"type": "object"})
    assert old[0].content.startswith("One team.\n\nAnswer with a single JSON object")
