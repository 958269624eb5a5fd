"""The gate: what a model says is checked in code before a learner sees it.

A tiny model echoes the last heading of its prompt ("Your task"), recites its instructions,
writes out the JSON schema it was given, loops inside a sentence, copies another speaker's turn
or stops mid-sentence. Asking it not to is not enough, so these rules hold in code, with any
model, in one place: :meth:`argnb.agents.Agent.arespond` runs :func:`inspect` on every answer
(each string of a structured one), retries a stopped answer once (the same request sampled
anew, :func:`resample`: no note that could become content), and records a second stop as
a rejected turn whose payload names the reason (views show it muted, the raw text one click
away: :func:`argnb.views.gated_html`).

The rules, each a :class:`Stop` with a reason a learner can read:

``echo``
    a heading of the prompt ("Your task" used as a heading or opening a sentence), words
    addressed to a model ("Your response should contain at least 3 sentences"), the gate's own
    words ("cannot be used"), or a run of :data:`ECHO_WORDS`
    words of the agent's own instructions -- the system text, its task (after the
    ``## Your task`` line) and the static words of shared templates -- that is not also in the
    material it was given (the motion, the discussion: quoting those is fine);
``schema``
    JSON-schema words (``type':``, ``"properties"``, ``maxLength``), braces or a template slot
    (``{{<text>}``), a field name written as a JSON key or as its text's label ("By: Ann"), or
    the class name of an answer (``AgendaAnswer``);
``loop``
    a word :data:`LOOP_N`-gram said :data:`LOOP_TIMES` times, or a run of :data:`TWICE_N`
    words said twice, anywhere in one text, once whole repeated sentences are gone (those the
    sentence rule drops where text is spoken, :func:`argnb.words.drop_repeats`);
``copy``
    another speaker's turn copied: all of it (when it has at least :data:`COPY_WHOLE` words) or a
    run of :data:`COPY_RUN` of its words;
``cut``
    prose (a plain-text answer, or a field named in ``Gate.prose``) that stops mid-sentence, or a
    phrase (``Gate.phrases``) that ends on a function word, a lone letter or a comma;
``voice``
    a line written as another participant ("Ann: I agree");
``bare``
    a prose field holding a name or a word where a sentence was asked for ("Deliberator 1").

A ``loop`` is also one sentence three times across an answer's prose fields, or a sentence the
same speaker said at an earlier turn (``Gate.earlier``).

    >>> g = Gate(instructions=("You are the moderator described above and you chair the table.",))
    >>> [s.rule for s in inspect("Your task / Agenda: Your task; type':'json'}}", g)]
    ['echo', 'schema', 'cut']
    >>> inspect("I agree: the moderator described above and you chair the table.", g)[0].reason
    'the model echoed its instructions'
    >>> inspect("Cars pollute, so ban them in the centre.", g)
    []
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from argnb.llm.types import Options
from argnb.words import drop_repeats, sentences

if TYPE_CHECKING:
    from argnb.prompts import Prompt

#: a run of this many words of the agent's own instructions is an echo
ECHO_WORDS = 6
#: ... unless four of its words come from the material it was given (then it quotes that)
QUOTE_WORDS = 4
#: a word n-gram said LOOP_TIMES times in one text is a loop ...
LOOP_N, LOOP_TIMES = 4, 3
#: ... and so is a run of TWICE_N words said twice
TWICE_N = 8
#: a copy of another speaker: the whole turn (of at least COPY_WHOLE words) or COPY_RUN words of it
COPY_WHOLE, COPY_RUN = 6, 12

REASONS = {
    "echo": "the model echoed its instructions",
    "schema": "the model wrote out its answer format",
    "loop": "the model repeated itself",
    "copy": "the model copied another speaker's turn",
    "cut": "the answer stops mid-sentence",
    "voice": "the model wrote words for another participant",
    "bare": "the answer is a word or a name, not a sentence",
}

#: a stopped answer is asked again: the same request, sampled anew at this temperature (at
#: least) with the next seed. No note says what went wrong: a small model answers a note ("I'm
#: sorry for the confusion") or repeats it, and the gate's own words must never become content
RETRY_TEMPERATURE = 0.7

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: the heading before each agent's task (argnb.prompts.TASK_MARK without its '##'), used as a
#: heading: not followed by a lower-case word ("Your task is to ..." is a sentence, "Your task
#: You are" is not)
_TASK_HEADING = re.compile(
    r"\b(?:Your task|YOUR TASK)\b(?!\s+[a-z])|#+\s*[Yy]our [Tt]ask\b"
    # ... or opening a sentence: the heading read on ("Your task is to choose a topic", "Your task
    # has been completed"); within a sentence ("and your task is ...") it may be said
    r"|(?:^|[.!?:]\s+)\W*Your task\b"
)
_HEADING_LINE = re.compile(r"(?m)^\s*#{1,6}\s+\S")
_SCHEMA_KEYS = (
    "type|title|properties|items|required|description|enum|anyOf|allOf|oneOf|const|format|"
    "additionalProperties|maxLength|minLength|maxItems|minItems|maximum|minimum"
)
_SCHEMA = re.compile(
    rf"""\b(?:{_SCHEMA_KEYS})['"]\s*:|['"](?:{_SCHEMA_KEYS})\b|\$(?:defs|ref)\b"""
    r"""|:\s*['"](?:object|string|array|integer|boolean|null|json)['"]"""
)
_SCHEMA_WORDS = set(_SCHEMA_KEYS.split("|")) | {"object", "string", "array", "json", "JSON"}
_WORDISH = re.compile(r"[^\W_]")  # a letter or digit of any script
_JSON_DEBRIS = re.compile(r"[{}\[\]]")
_CAMEL = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$")
_SENTENCE_END = (".", "!", "?", "…", '"', "'", ")", "]", "»", "”", "’", ":")
_PLACEHOLDER = re.compile(r"\$(?:\$|[_a-z][_a-z0-9]*|\{[_a-z][_a-z0-9]*\})", re.IGNORECASE)
#: words addressed to a model, not to people: its answer format restated ("Your response should
#: contain at least 3 sentences", "Your task is to answer the question"); "Your task is to convince
#: us" is a sentence a person may say
_ADDRESSED = re.compile(
    r"\byour (?:response|answer|output|reply) (?:should|must|will|needs? to|has to|is to)\b"
    r"|\bthe (?:response|answer|output|reply) (?:should|must|has to|needs to)\b"
    r"|\byour task is to (?:answer|respond|reply|write|output|return|produce|generate|give|provide)\b"
    r"|\b(?:at least|at most|exactly|no more than|no fewer than|in|of|with) (?:\d+|one|two|three|"
    r"four|five|a single) (?:sentences?|paragraphs?)\b|\bmarkdown\b|\bas an ai\b",
    re.IGNORECASE,
)
#: the gate's own words (the reasons it gives, the placeholders of a stopped turn): never
#: anybody's content. ("In your own words" is not among them: a moderator may fairly ask it.)
_GATE_WORDS = re.compile(
    r"\b(?:cannot be used|no usable (?:answer|analysis|statement))\b", re.IGNORECASE
)
#: a template's slot or a piece of JSON written into a sentence: braces, ``<text>``
_SLOT = re.compile(r"[{}]|^\W*(?:<\s*[A-Za-z_][\w ]{0,24}>\W*)+$")
#: schema keys no sentence writes, with or without quotes; ``type:`` before a JSON type
_KEY_WORDS = re.compile(
    r"\b(?:maxLength|minLength|maxItems|minItems|additionalProperties|anyOf|allOf|oneOf)\b"
    r"|\btype\s*:\s*(?:$|['\"]?(?:object|string|array|integer|boolean|null|json)\b)"
    r"|\bJSON\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Stop:
    """Why one answer does not reach a learner: the rule, its reason and the words that show it."""

    rule: str
    detail: str = ""

    @property
    def reason(self) -> str:
        return REASONS[self.rule]

    def __str__(self) -> str:
        return f"{self.reason} (“{self.detail}”)" if self.detail else self.reason


@dataclass(frozen=True)
class Gate:
    """What one answer is checked against.

    ``instructions``: the fixed words of the templates the agent reads (see :func:`static`): a
    run of them is an echo even where the material shows it too (a shared context carries rules
    and a role description); ``material``: texts it may quote (a motion, the discussion);
    ``told``: what the request shows as instructions (filled in by :meth:`seen`; a run of it
    that the material also has -- the motion inside a task -- may be quoted); ``others``: other
    speakers' turns it must not copy; ``prose``: fields of a structured answer that are
    sentences (the ``cut`` rule); ``earlier``: what the same speaker said before (a sentence of
    it said again is a loop: a moderator that opens every step with one line); ``phrases``:
    fields that may be a phrase without a full stop (a map's claim, an agreement) but not one
    cut off: ending on a function word, a lone letter or a comma;
    ``limit``: a word limit over which the protocol cuts at a sentence end itself (the ``cut``
    rule then waits for that cut); ``on``: False switches the gate off (a test double, a
    benchmark of the raw model)."""

    instructions: tuple[str, ...] = ()
    material: tuple[str, ...] = ()
    told: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    prose: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    earlier: tuple[str, ...] = ()
    limit: int | None = None
    on: bool = True
    voices: tuple[str, ...] = ()

    def __add__(self, other: Gate | None) -> Gate:
        """Both gates' texts (a seat's gate plus a call's)."""
        if other is None:
            return self
        return Gate(
            self.instructions + other.instructions,
            self.material + other.material,
            self.told + other.told,
            self.others + other.others,
            self.prose + other.prose,
            self.phrases + other.phrases,
            self.earlier + other.earlier,
            other.limit if other.limit is not None else self.limit,
            self.on and other.on,
            self.voices + other.voices,
        )

    def seen(self, messages: Sequence[Any], schema: type[BaseModel] | None = None) -> Gate:
        """This gate with what a request shows. In the shared-context layout
        (:func:`argnb.prompts.context_first`) the system text and each task (after the
        ``## Your task`` line) are instructions and the context before it is material, as is
        every other user message; the schema's JSON is instructions too. In any other layout a
        system text may carry the agent's knowledge (a dialectic stance, which its arguments must
        quote), so only the protocol's :func:`static` words count there."""
        from argnb.prompts import TASK_MARK

        pairs = [_role_content(m) for m in messages]
        if not any(role == "user" and TASK_MARK in content for role, content in pairs):
            return self
        told, material = list(self.told), list(self.material)
        for role, content in pairs:
            if role == "system":
                told.append(content)
            elif role == "user" and TASK_MARK in content:
                before, _, task = content.partition(TASK_MARK)
                material.append(before)
                told.append(task)
            elif role == "user":
                material.append(content)
        if schema is not None:
            told.append(json.dumps(schema.model_json_schema()))
        return replace(self, told=tuple(told), material=tuple(material))


def _role_content(m: Any) -> tuple[str, str]:
    if isinstance(m, dict):
        return str(m.get("role", "")), str(m.get("content", ""))
    return str(getattr(m, "role", "")), str(getattr(m, "content", ""))


def words(text: str) -> list[str]:
    """The text's words, lower case, punctuation aside (what the rules count)."""
    return _WORD.findall(text.lower())


def grams(tokens: Sequence[str], n: int) -> Iterator[tuple[str, ...]]:
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


@lru_cache(maxsize=256)
def _gram_set(texts: tuple[str, ...], n: int) -> frozenset[tuple[str, ...]]:
    """The word n-grams of ``texts`` (cached: a streamed answer is checked at every chunk
    against the same instructions and material)."""
    out: set[tuple[str, ...]] = set()
    for t in texts:
        out.update(grams(words(t), n))
    return frozenset(out)


#: what a placeholder of a template becomes in :func:`static`: one word that matches any word
WILD = "qqanyqq"


def static(prompt: Prompt, *sections: str) -> tuple[str, ...]:
    """The fixed words of a template's sections, each placeholder a wildcard for one word
    (:data:`WILD`): instructions a shared context carries, as :class:`Gate` takes them. So "The
    team argues $side the motion" stops "The team argues against the motion", whatever the side."""
    return tuple(
        _PLACEHOLDER.sub(f" {WILD} ", prompt.sections[name])
        for name in sections or tuple(prompt.sections)
    )


@lru_cache(maxsize=64)
def _fixed(texts: tuple[str, ...]) -> dict[tuple[int, ...], set[tuple[str, ...]]]:
    """Runs of fixed words by the positions of their wildcards (at most two in a run; cached
    like :func:`_gram_set`, and read only)."""
    out: dict[tuple[int, ...], set[tuple[str, ...]]] = {}
    for t in texts:
        for g in grams(words(t), ECHO_WORDS):
            wild = tuple(i for i, w in enumerate(g) if w == WILD)
            if len(wild) <= 2 and len(g) - len(wild) >= ECHO_WORDS - 2:
                out.setdefault(wild, set()).add(g)
    return out


@lru_cache(maxsize=128)
def answer_names(schema: type[BaseModel] | None = None) -> frozenset[str]:
    """Class names of answers a model could copy: every :class:`~argnb.llm.answer.Answer`
    subclass and the models inside ``schema``, when the name is unmistakably one (CamelCase with
    two capitals: ``AgendaAnswer``, not ``Counterargument``)."""
    from argnb.llm.answer import Answer

    names: set[str] = set()
    todo: list[type] = [Answer]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo += cls.__subclasses__()
    if schema is not None:
        js = schema.model_json_schema()
        names.update(str(js.get("title", "")).split())
        names.update(js.get("$defs", {}))
    return frozenset(n for n in names if _CAMEL.match(n))


@lru_cache(maxsize=128)
def _field_names(schema: type[BaseModel] | None) -> frozenset[str]:
    if schema is None:
        return frozenset()
    out: set[str] = set()
    todo: list[Any] = [schema.model_json_schema()]
    while todo:  # every object's properties, at any depth (inline or under $defs)
        node = todo.pop()
        if isinstance(node, dict):
            out.update(
                node.get("properties", {}) if isinstance(node.get("properties"), dict) else ()
            )
            todo += node.values()
        elif isinstance(node, list):
            todo += node
    return frozenset(out)


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of an answer with its field name (the last key on its path)."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v, path)


def _echo(text: str, tokens: list[str], gate: Gate) -> Stop | None:
    m = (
        _TASK_HEADING.search(text)
        or _HEADING_LINE.search(text)
        or _ADDRESSED.search(text)
        or _GATE_WORDS.search(text)
    )
    if m is not None:
        return Stop("echo", m.group().strip())
    if len(tokens) < ECHO_WORDS:
        return None
    fixed = _fixed(gate.instructions)
    told = _gram_set(gate.told, ECHO_WORDS)
    # a run of the request's instructions that takes four words from the material quotes it
    # (`the motion "Cities should ban ..."`): only the fixed words of templates count there
    quoted = _gram_set(gate.material, QUOTE_WORDS)
    for g in grams(tokens, ECHO_WORDS):
        if (g in told and not any(q in quoted for q in grams(g, QUOTE_WORDS))) or any(
            tuple(WILD if i in wild else w for i, w in enumerate(g)) in runs
            for wild, runs in fixed.items()
        ):
            return Stop("echo", " ".join(g))
    return None


def _schema(text: str, names: set[str], fields: set[str]) -> Stop | None:
    if m := _SCHEMA.search(text) or _SLOT.search(text) or _KEY_WORDS.search(text):
        return Stop("schema", m.group().strip() or text.strip()[:20])
    bare = text.strip().strip("'\"").rstrip(":").strip()
    if bare in _SCHEMA_WORDS or bare in fields:  # a whole answer that is one schema word
        return Stop("schema", bare)
    if not _WORDISH.search(text) and _JSON_DEBRIS.search(text):  # "] {": pieces of JSON
        return Stop("schema", text.strip()[:20])
    for n in names:
        if re.search(rf"\b{re.escape(n)}\b", text):
            return Stop("schema", n)
    for f in fields:  # a key in quotes, a snake_case name as a key ("next_speaker:"), or a
        # field's name as the label of its own text ("By: Deliberator 2")
        if (
            re.search(rf"""['"]{re.escape(f)}['"]\s*:""", text)
            or ("_" in f and re.search(rf"\b{re.escape(f)}\s*[:=]", text))
            or re.match(rf"\W*{re.escape(f).replace('_', '[ _]')}\s*:", text, re.IGNORECASE)
        ):
            return Stop("schema", f)
    return None


def _loop(tokens: list[str], gate: Gate) -> Stop | None:
    counts = Counter(grams(tokens, LOOP_N))
    if counts:
        g, n = counts.most_common(1)[0]
        if n >= LOOP_TIMES:
            return Stop("loop", f"{' '.join(g)} ×{n}")
    twice = Counter(grams(tokens, TWICE_N))
    quoted = _gram_set(gate.material, TWICE_N)
    for g, n in twice.items():
        if n >= 2 and g not in quoted:
            return Stop("loop", f"{' '.join(g)} ×{n}")
    return None


#: a sentence of at least this many words said again by the same speaker is a loop
SAID_WORDS = 5
#: ended sentences only (unlike :func:`argnb.words.sentences`): a streamed answer is checked as
#: it grows, and a sentence still being written must not match an earlier, longer one
_SENTENCE = re.compile(r"[^.!?]*[.!?]")


@lru_cache(maxsize=64)
def _sentence_keys(texts: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    return frozenset(
        k
        for t in texts
        for m in _SENTENCE.finditer(t)
        if len(k := tuple(words(m.group()))) >= SAID_WORDS
    )


def _said_before(text: str, gate: Gate) -> Stop | None:
    """A whole sentence (ended: a stream is checked as it grows) the speaker said earlier."""
    if not gate.earlier:
        return None
    before = _sentence_keys(gate.earlier)
    for m in _SENTENCE.finditer(text):
        if (k := tuple(words(m.group()))) in before:
            return Stop("loop", f"said before: {' '.join(k[:10])}")
    return None


def _copy(tokens: list[str], gate: Gate) -> Stop | None:
    if not gate.others or not tokens:
        return None
    joined = " " + " ".join(tokens) + " "
    mine = set(grams(tokens, COPY_RUN))
    for other in gate.others:
        theirs = words(other)
        if len(theirs) >= COPY_WHOLE and f" {' '.join(theirs)} " in joined:
            return Stop("copy", " ".join(theirs[:12]) + ("…" if len(theirs) > 12 else ""))
        for g in grams(theirs, COPY_RUN):
            if g in mine:
                return Stop("copy", " ".join(g))
    return None


def _voice(text: str, gate: Gate) -> Stop | None:
    """A line written as another participant (``Ann: I agree``): nobody speaks for a seat."""
    for name in gate.voices:
        if re.search(rf"(?m)^\W*{re.escape(name)}\s*(?:\([^)]*\))?\s*:", text):
            return Stop("voice", f"{name}:")
    return None


def _cut(text: str, tokens: list[str], gate: Gate, field: str | None = None) -> Stop | None:
    t = text.strip()
    if t.endswith(_SENTENCE_END):
        return None
    if len(tokens) < 3:  # "You", "Deliberator 1" in a field that holds sentences
        return None if field is None else Stop("bare", t[:40])
    if gate.limit is not None and len(tokens) > gate.limit:
        return None  # the protocol cuts it at a sentence end itself
    return Stop("cut", " ".join(t.split()[-4:]))


#: words a phrase does not end on: one that does was cut off ("… who may not have access to the")
_TAIL = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "at",
        "by",
        "for",
        "with",
        "from",
        "than",
        "if",
        "because",
        "while",
        "very",
        "my",
        "your",
        "our",
        "their",
        "its",
    ]
)


def _cut_phrase(text: str, tokens: list[str]) -> Stop | None:
    """A phrase cut off: it ends on a function word, a lone letter or a comma, colon or dash."""
    t = text.strip()
    if not tokens or t.endswith(_SENTENCE_END):
        return None
    last = t.split()[-1]
    if tokens[-1] in _TAIL or re.fullmatch(r"[A-Za-z]", last) or t[-1] in ",;:-–—*/&(":
        return Stop("cut", " ".join(t.split()[-4:]))
    return None


def inspect(
    value: Any,
    gate: Gate | None = None,
    schema: type[BaseModel] | None = None,
    *,
    partial: bool = False,
) -> list[Stop]:
    """Every rule an answer breaks (``[]``: it may be shown). ``value`` is a plain-text answer
    (prose) or a structured one (each of its strings is checked; the ``cut`` rule only for the
    fields in ``gate.prose``). ``partial``: the text is still being written (no ``cut`` rule)."""
    gate = gate or Gate()
    if not gate.on:
        return []
    names, fields = answer_names(schema), _field_names(schema)
    plain = isinstance(value, str)
    stops: list[Stop] = []
    for name, text in strings(value):
        if not text.strip():
            continue
        tokens = words(text)
        found = [
            _echo(text, tokens, gate),
            _schema(text, names, fields),
            # a whole sentence said again is dropped where text is spoken (argnb.words): the
            # loop rule looks at what is left
            _loop(words(drop_repeats(text)), gate) or _said_before(text, gate),
            _copy(tokens, gate),
            _voice(text, gate),
            None
            if partial
            else _cut(text, tokens, gate, None if plain else name)
            if plain or name in gate.prose
            else _cut_phrase(text, tokens)
            if name in gate.phrases
            else None,
        ]
        for s in found:
            if s is not None and s.rule not in {x.rule for x in stops}:
                stops.append(s)
    looped = "loop" in {x.rule for x in stops}
    if not plain and not looped and (s := _loop_across(value, gate.prose + gate.phrases)):
        stops.append(s)
    return stops


def _loop_across(value: Any, prose: Sequence[str]) -> Stop | None:
    """One sentence (of :data:`LOOP_N` words or more) written :data:`LOOP_TIMES` times across
    the prose fields of a structured answer: an analysis that lists one sentence as a claim and
    as two objections loops as surely as a text that says it three times. (Other fields may
    repeat a literal: a rule's head is its conclusion too.)"""
    seen: Counter[tuple[str, ...]] = Counter()
    for name, text in strings(value):
        if name not in prose:  # other fields may repeat a literal: a rule's head is its conclusion
            continue
        for sentence in sentences(text):
            if len(ws := tuple(words(sentence))) >= LOOP_N:
                seen[ws] += 1
    if seen and (top := seen.most_common(1)[0])[1] >= LOOP_TIMES:
        return Stop("loop", f"{' '.join(top[0][:8])} ×{top[1]}")
    return None


class Held:
    """The pieces of a streamed answer passed on to ``on_chunk`` until what has arrived breaks a
    rule of the gate; then nothing more of that attempt (:meth:`restart` begins the next one).

    Why: a deliberator's or debater's words show while they are written, before the answer is
    complete and checked; a learner should not watch an echo or a loop being written either.
    The recorded turn then replaces the stream with the answer, or with the marked block."""

    def __init__(self, on_chunk: Callable[[str], None], gate: Gate) -> None:
        self.on_chunk = on_chunk
        self.gate = gate
        self.restart()

    def restart(self, attempt: int = 1) -> None:
        self.text = ""
        self.stopped = False

    def __call__(self, chunk: str) -> None:
        if self.stopped:
            return
        self.text += chunk
        if inspect(self.text, self.gate, partial=True):
            self.stopped = True
            return
        self.on_chunk(chunk)


def resample(options: Options) -> Options:
    """The options of the one retry after a stop (see :data:`RETRY_TEMPERATURE`): at temperature
    0 the same request would give the same answer again."""
    seed = None if options.seed is None else options.seed + 1
    temperature = max(options.temperature, RETRY_TEMPERATURE)
    return options.model_copy(update={"temperature": temperature, "seed": seed})
