"""The greedy-under-a-grammar sampler (argnb/llm/sampling.py) chooses what the plain chain does.

On the embedded model: the same schema-constrained requests with the fast path on and off give
byte-identical replies, the fast path was taken, and the grammar refused the model's favourite
token at least once (so the fallback to checking every token is exercised too).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "claim": {"type": "string", "maxLength": 120},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
        "tags": {"type": "array", "items": {"enum": ["ad hominem", "straw man", "none"]}},
    },
    "required": ["claim", "score", "tags"],
}
PROMPTS = [
    "Rate this argument from 0 to 5: 'He is rich, so his tax plan is selfish.'",
    "Give a claim about school uniforms, a score and fallacy tags. Repeat words freely.",
]


def _reply(llm, prompt: str, penalty: float) -> str:
    # from an empty context: llama-cpp-python would otherwise re-read only the prompt's last
    # token after the previous call, and logits from that path differ in the last bits
    llm.reset()
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        response_format={"type": "json_object", "schema": SCHEMA},
        temperature=0.0,
        repeat_penalty=penalty,
        max_tokens=90,
        seed=42,
    )
    return out["choices"][0]["message"]["content"]


def test_fast_and_plain_sampling_give_the_same_bytes(local) -> None:
    from argnb.llm.sampling import GreedyGrammarSampler

    llm = local.llm
    was = llm.fast_grammar
    try:
        # without a repeat penalty, and with one (the penalties sampler changes the logits)
        for prompt, penalty in zip(PROMPTS, (1.0, 1.3), strict=True):
            llm.fast_grammar = False
            plain = _reply(llm, prompt, penalty)
            assert not isinstance(llm._sampler, GreedyGrammarSampler)
            llm.fast_grammar = True
            fast = _reply(llm, prompt, penalty)
            used = llm._sampler
            assert isinstance(used, GreedyGrammarSampler) and used.tokens > 10
            assert used.refused >= 1, "the grammar never refused the best token"
            assert fast == plain, (prompt, penalty)
    finally:
        llm.fast_grammar = was


def test_free_text_and_sampled_requests_keep_llama_cpps_own_sampler(local) -> None:
    from argnb.llm.sampling import GreedyGrammarSampler

    llm = local.llm
    llm.create_chat_completion(
        messages=[{"role": "user", "content": "Say hi."}], temperature=0.0, max_tokens=3
    )
    assert not isinstance(llm._sampler, GreedyGrammarSampler)  # no grammar
    llm.create_chat_completion(
        messages=[{"role": "user", "content": "Say hi."}],
        response_format={"type": "json_object", "schema": SCHEMA},
        temperature=0.7,
        max_tokens=3,
    )
    assert not isinstance(llm._sampler, GreedyGrammarSampler)  # not greedy


def test_install_routes_every_llama_of_the_process_once() -> None:
    """What the class model server (``python -m argnb.llm.sampling``) does before it serves."""
    import types

    from argnb.llm.sampling import install

    class Llama:
        def _init_sampler(self, **kw):
            return ("llama.cpp's own", kw)

    fake = types.SimpleNamespace(Llama=Llama)
    install(fake)
    install(fake)  # twice: still one layer
    assert Llama()._init_sampler(temp=0.0, grammar=None) == ("llama.cpp's own",
                                                             {"temp": 0.0, "grammar": None})  # fmt: skip
    assert Llama()._init_sampler(temp=0.8, grammar="g")[0] == "llama.cpp's own"
