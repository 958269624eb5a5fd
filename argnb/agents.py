"""One agent turn for every protocol.

An :class:`Agent` is a name, a backend and a system prompt. :meth:`Agent.arespond` asks it one
question and returns a :class:`Response`: the validated value (or ``None``: invalid) and the
transcript turns it produced. Every protocol -- fallacy deliberation, the dialectic dialogue,
critique judges, debate and roundtable roles -- goes through here, so three things hold everywhere:

* **cost is counted once and completely**: each turn records the tokens, model calls and seconds
  of every reply behind it -- the schema repair, the rule repair and answers that failed;
* **rules get one repair**: an optional ``check`` returns the answer's problems; the agent is
  told them (quoted) and may answer once more; answers that still break a rule are rejected
  (``strict=True``) or kept with their problems recorded (``strict=False``);
* **the gate stands before every learner**: each answer (every string of a structured one) goes
  through :func:`argnb.gate.inspect` -- echoed instructions or schema, loops, a copy of another
  speaker, a sentence cut off; a stopped answer is asked once more (the same request, sampled
  anew: :func:`argnb.gate.resample`), and a second stop is a rejected turn whose payload names the reason (``Rejected.gate``);
* **per-item failures never stop a run, run-stopping ones always do**: an answer that does not
  validate, or a plain :class:`~argnb.errors.BackendError` about this input (the prompt does not
  fit the context window), becomes an invalid turn; a server that is down, a refused key, a
  missing model or a timeout (any *subclass* of ``BackendError``) propagates, so a batch stops,
  keeps what it finished and resumes later.

A structured answer can also show one of its string fields while it is written
(``stream_field="message", on_text=...``): the first request streams, the field's new characters
go to ``on_text``, and the answer is then validated and recorded exactly as without streaming.

    >>> from argnb.llm import ScriptedBackend
    >>> from argnb.llm.answer import Answer
    >>> class Vote(Answer):
    ...     vote: int
    >>> agent = Agent("Ada", ScriptedBackend(['{"vote": 7}', '{"vote": 1}']))
    >>> r = agent.respond("Vote 0 or 1.", Vote, check=lambda v: [] if v.vote in (0, 1) else ["0 or 1"])
    >>> r.value.vote, [t.role for t in r.turns], r.cost.calls
    (1, ['rejected answer', 'answer'], 2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from argnb.batch import run_sync
from argnb.errors import ArgnbError, BackendError, InvalidOutput
from argnb.gate import Gate, Held, Stop, inspect, resample
from argnb.llm.base import Backend, Message, Options, Reply, Usage, to_messages
from argnb.llm.partial import FieldStream
from argnb.llm.structured import astructured_call, schema_of, with_instructions
from argnb.transcript import Cost, Payload, Rejected, Turn

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: how much of a rejected answer a turn keeps (a runaway model can write megabytes)
RAW_LIMIT = 2000

REPAIR = (
    "Your answer breaks the rules of this task:\n$problems\n\n"
    "Give a corrected answer that respects these rules."
)


def bullets(problems: Sequence[str]) -> str:
    """Problems as a Markdown list, the way repair messages quote them."""
    return "\n".join(f"- {p}" for p in problems)


def _repair_text(repair: str | Callable[[list[str]], str], problems: list[str]) -> str:
    if callable(repair):
        return repair(problems)
    return repair.replace("$problems", bullets(problems))


def per_item(exc: BaseException) -> bool:
    """True for failures that belong to one input (record and carry on), False for failures
    that would hit every input alike (stop the run): see the module docstring."""
    return isinstance(exc, InvalidOutput) or type(exc) is BackendError


def short_error(exc: BaseException) -> str:
    """``Type: message`` in at most 300 characters, for a turn's record."""
    msg = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__}: {msg}"[:300]


@dataclass(frozen=True)
class Response(Generic[T]):
    """What one agent turn produced: the value (``None`` when invalid) and its turns.

    ``turns`` holds one turn per attempt: rejected attempts first (``valid=False``, payload
    :class:`~argnb.transcript.Rejected`), then the accepted answer -- or only rejections when
    none was accepted. A protocol records all of them, so the transcript's cost is complete.
    """

    value: T | None
    turns: tuple[Turn, ...]
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.value is not None

    @property
    def turn(self) -> Turn:
        """The last turn: the accepted answer, or the last rejection."""
        return self.turns[-1]

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def error(self) -> str:
        """Why the last attempt was rejected ("" for an accepted answer)."""
        p = self.turn.payload
        if self.valid or not isinstance(p, Rejected):
            return ""
        # a stopped answer's reasons, not its words (they are shown only marked, argnb.views)
        return p.gate or p.error or "; ".join(p.problems)

    @property
    def gated(self) -> str:
        """The gate's reason when the last attempt was stopped by it ("" otherwise)."""
        p = self.turn.payload
        return p.gate if not self.valid and isinstance(p, Rejected) else ""

    @property
    def raw(self) -> str:
        """What the model wrote in the last rejected attempt ("" for an accepted answer): a view
        shows it only marked, one click away (:func:`argnb.views.gated_html`)."""
        p = self.turn.payload
        return p.raw if not self.valid and isinstance(p, Rejected) else ""


@dataclass
class _Attempt:
    value: Any
    raw: str
    replies: list[Reply]
    error: str = ""


@dataclass
class Agent:
    """A participant that speaks through a backend: a name, the backend and its instructions.

    ``system`` is sent as the first message of every request; ``options`` override the
    backend's generation options for this agent; ``gate`` what its answers are checked against
    besides the request itself (:class:`argnb.gate.Gate`; ``Gate(on=False)`` lets everything by).
    """

    name: str
    backend: Backend
    options: Options | None = None
    system: str = field(default="", kw_only=True)
    gate: Gate = field(default_factory=Gate, kw_only=True)

    @classmethod
    def from_spec(cls, spec: str, name: str | None = None, **connect_kw: Any) -> Agent:
        """``"local:smollm2-135m"``, ``"ollama:llama3.2"``, ``"openai:gpt-4o-mini"`` or a bare
        backend name (its default model); the name defaults to ``backend:model``."""
        backend = connect_spec(spec, **connect_kw)
        return cls(name or f"{backend.name}:{backend.model}", backend)

    def describe(self) -> dict[str, Any]:
        """What identifies this agent in results files (never secrets)."""
        return {"name": self.name, **self.backend.describe()}

    def messages(self, prompt: str | Sequence[Message | dict[str, str]]) -> list[Message]:
        """The request: the system prompt, then the prompt (text, or earlier turns + question)."""
        msgs = to_messages(prompt)
        if self.system:
            msgs = [Message(role="system", content=self.system), *msgs]
        return msgs

    def request(self, prompt: Any, schema: type[BaseModel] | None = None) -> list[Message]:
        """The messages the first attempt of ``arespond(prompt, schema)`` sends (the schema note
        included): what :meth:`Backend.prefill` can read ahead while a learner types."""
        msgs = self.messages(prompt)
        return with_instructions(msgs, schema_of(schema)) if schema is not None else msgs

    # -- one turn ------------------------------------------------------------------------
    async def _attempt(
        self,
        msgs: list[Message],
        schema: type[BaseModel] | None,
        parse: Callable[[str], Any] | None,
        options: Options | None,
        on_chunk: Callable[[str], None] | None = None,
    ) -> _Attempt:
        opts = options or self.options
        if schema is not None:
            try:
                got = await astructured_call(
                    self.backend, msgs, schema, options=opts, on_chunk=on_chunk
                )
            except Exception as exc:
                if not per_item(exc):
                    raise
                replies = list(getattr(exc, "replies", []))
                raw = getattr(exc, "raw", "") or (replies[-1].text if replies else "")
                return _Attempt(None, raw, replies, short_error(exc))
            return _Attempt(got.value, got.raw, list(got.replies))
        try:
            reply = await self.backend.achat(msgs, options=opts)
        except Exception as exc:
            if not per_item(exc):
                raise
            return _Attempt(None, "", [], short_error(exc))
        if parse is None:
            return _Attempt(reply.text, reply.text, [reply])
        try:
            return _Attempt(parse(reply.text), reply.text, [reply])
        except ValueError as exc:
            return _Attempt(None, reply.text, [reply], str(exc)[:300])

    def _turn(self, att: _Attempt, **fields: Any) -> Turn:
        usage = Usage()
        for r in att.replies:
            usage = usage + r.usage
        last = att.replies[-1] if att.replies else None
        return Turn(
            speaker=self.name,
            usage=usage,
            calls=len(att.replies),
            latency_s=sum(r.latency_s for r in att.replies),
            model=(last.model if last else "") or self.backend.model,
            backend=(last.backend if last else "") or self.backend.name,
            **fields,
        )

    async def arespond(
        self,
        prompt: str | Sequence[Message | dict[str, str]],
        schema: type[M] | None = None,
        *,
        role: str | Callable[[Any], str] = "answer",
        check: Callable[[Any], list[str]] | None = None,
        repair: str | Callable[[list[str]], str] = REPAIR,
        strict: bool = True,
        text: Callable[[Any], str] | None = None,
        payload: Callable[[Any], Payload] | None = None,
        round: int | None = None,
        parse: Callable[[str], Any] | None = None,
        options: Options | None = None,
        stream_field: str | None = None,
        on_text: Callable[[str], None] | None = None,
        gate: Gate | None = None,
    ) -> Response[Any]:
        """Ask once (plus one repair when ``check`` finds problems); see the module docstring.

        ``schema``: the answer's pydantic model (validated, one schema-repair turn); without
        one the answer is text, mapped by ``parse`` when given (a ``ValueError`` makes it
        invalid). ``role``, ``text`` and ``payload`` say how an accepted answer is recorded
        (``role`` may be a function of the value); ``repair`` is the repair message, with
        ``$problems`` where the list goes, or a function of the problems that writes it.

        ``stream_field`` (with ``schema`` and ``on_text``): the first request streams and
        ``on_text`` receives each new piece of that top-level string field as the model writes
        it; repairs are plain calls. The response and its turns are the same as without it.

        ``gate`` adds to the agent's gate for this call (other speakers' turns, prose fields).
        A stopped answer is asked once more, after the original request (not after the stopped
        answer: a small model shown its echo echoes it again); a check's repair follows the
        answer it repairs.
        """
        if stream_field is not None and (schema is None or on_text is None):
            raise ArgnbError(
                "stream_field streams a field of a structured answer",
                hint="pass a schema and on_text=callback together with stream_field",
            )
        msgs = self.messages(prompt)
        first = msgs
        the_gate = (self.gate + gate).seen(msgs, schema)
        if on_text is not None:  # the streamed field stops where the gate would stop it
            on_text = Held(on_text, the_gate)
        turns: list[Turn] = []
        problems: list[str] = []
        n, last = 0, False
        while not last:
            n += 1
            on_chunk = None
            if stream_field is not None and n == 1:
                field_text = FieldStream(stream_field)

                def on_chunk(chunk: str, f: FieldStream = field_text) -> None:
                    if piece := f.feed(chunk):
                        on_text(piece)  # type: ignore[misc]

            att = await self._attempt(msgs, schema, parse, options, on_chunk)
            stops: list[Stop] = []
            if att.value is None:
                problems = [
                    f"the answer did not fit the schema: {att.error}"
                    if schema is not None
                    else f"the answer could not be read: {att.error}"
                ]
            else:
                stops = inspect(att.value, the_gate, schema)
                problems = [str(s) for s in stops]
                if not stops and check is not None:
                    problems = list(check(att.value))
            last = n == 2 or not (stops or check is not None)
            if att.value is not None and not stops and (not problems or (last and not strict)):
                role_name = role(att.value) if callable(role) else role
                turn = self._turn(
                    att,
                    role=role_name,
                    text=text(att.value) if text else att.raw,
                    payload=payload(att.value) if payload else Payload(),
                    round=round,
                )
                turns.append(turn)
                return Response(att.value, tuple(turns), tuple(problems))
            base_role = role if isinstance(role, str) else "answer"
            why = "; ".join(s.reason for s in stops)
            turns.append(
                self._turn(
                    att,
                    role=(
                        f"gated {base_role}"
                        if stops
                        else f"rejected {base_role}"
                        if check is not None
                        else "invalid"
                    ),
                    text=why or ("; ".join(problems) if check is not None else att.raw[:RAW_LIMIT]),
                    payload=Rejected(
                        attempt=n,
                        problems=problems,
                        error=att.error,
                        raw=att.raw[:RAW_LIMIT],
                        gate=why,
                    ),
                    round=round,
                    valid=False,
                )
            )
            if not last and stops:
                msgs = first  # the same request, sampled anew: no note (argnb.gate.resample)
                options = resample(options or self.options or self.backend.options)
            elif not last:
                msgs = [
                    *msgs,
                    Message(role="assistant", content=att.raw[:RAW_LIMIT] or "{}"),
                    Message(role="user", content=_repair_text(repair, problems)),
                ]
        return Response(None, tuple(turns), tuple(problems))

    def respond(self, prompt: Any, schema: type[M] | None = None, **kw: Any) -> Response[Any]:
        """Sync twin of :meth:`arespond` (works inside Jupyter too)."""
        return run_sync(self.arespond(prompt, schema, **kw))

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, {self.backend.name}:{self.backend.model})"


# -- backend:model specs -----------------------------------------------------------------
def parse_spec(spec: str) -> tuple[str | None, str | None]:
    """``"ollama:llama3.2"`` -> ``("ollama", "llama3.2")``; ``"local"`` -> ``("local", None)``.

    The model part may itself contain colons (``ollama:qwen2.5:7b``).

    >>> parse_spec("ollama:qwen2.5:7b"), parse_spec("local"), parse_spec(":m")
    (('ollama', 'qwen2.5:7b'), ('local', None), (None, 'm'))
    """
    name, _, model = spec.strip().partition(":")
    if not name and not model:
        raise ArgnbError(
            f"empty backend spec {spec!r}", hint="write backend:model, e.g. ollama:llama3.2"
        )
    return (name.strip().lower() or None), (model.strip() or None)


def connect_spec(spec: str, **connect_kw: Any) -> Backend:
    """A backend for ``"backend:model"`` (never made the session default)."""
    from argnb.config import connect

    name, model = parse_spec(spec)
    return connect(name, model, make_default=False, **connect_kw)


def parse_method_spec(spec: str) -> tuple[str, str | None]:
    """``"few@ollama:llama3.2"`` -> ``("few", "ollama:llama3.2")``: a method, optionally on its
    own backend (the one ``METHOD[@backend:model]`` parser of every CLI and config).

    >>> parse_method_spec("few@ollama:qwen2.5:7b"), parse_method_spec("zero")
    (('few', 'ollama:qwen2.5:7b'), ('zero', None))
    """
    method, _, where = spec.partition("@")
    return method.strip(), (where.strip() or None)


def method_backend(spec: str, default: Any, **connect_kw: Any) -> tuple[str, Any]:
    """``METHOD[@backend:model]`` -> (method, backend): its own backend, or ``default``."""
    method, where = parse_method_spec(spec)
    return method, (connect_spec(where, **connect_kw) if where else default)


def unique_names(agents: list[Agent]) -> list[Agent]:
    """Suffix repeated names (two agents on the same model are still two speakers)."""
    seen: dict[str, int] = {}
    for a in agents:
        seen[a.name] = seen.get(a.name, 0) + 1
    counter: dict[str, int] = {}
    for a in agents:
        if seen[a.name] > 1:
            counter[a.name] = counter.get(a.name, 0) + 1
            a.name = f"{a.name} #{counter[a.name]}"
    return agents


def parse_agents(spec: str | Sequence[str], **connect_kw: Any) -> list[Agent]:
    """Agents from ``"local:smollm2-135m,ollama:llama3.2"``; equal specs get distinct names."""
    specs = [s for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    return unique_names([Agent.from_spec(s, **connect_kw) for s in specs])
