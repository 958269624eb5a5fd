"""The dialectical protocol: argument construction → rebuttal → synthesis, with two agents.

Line 1: agent 1 states its main argument; agent 2 tries to defeat it; if it does, agent 1 tries
to defeat that counter-argument, and so on. The side that cannot counter loses the line. If the
main argument survives (grounded semantics over the line: IN) it is *justified*, the protocol
ends and its claim is the answer. Otherwise line 2 runs the same way with agent 2's main argument
and agent 1 attacking. If both main arguments are defeated, agent 1 synthesises a final answer from
the two warrants (see :mod:`argnb.dialectic.synthesis`).

Rules enforced in code on every answer, so they hold with any model:

- an attack must be of a kind the target admits (see :mod:`argnb.dialectic.attacks`) and name a
  conclusion / assumption the target actually has;
- a side may not use a premise it has used before (near-duplicates count, see
  :mod:`argnb.dialectic.novelty`);
- a broken answer gets exactly one repair turn that quotes the problems; a second failure (or an
  answer that does not even fit the schema after the structured-call repair) counts as
  "cannot counter" for an attack, "no argument" for a main argument.

Termination is guaranteed, not hoped for. With ``K = max_attacks`` (per line):

- each line asks for 1 main argument and at most ``K`` attacks (after ``K`` accepted attacks the
  line stops, whatever the model would say next) → at most ``K + 1`` agent turns per line;
- two lines and three synthesis steps → at most ``2(K + 1) + 3`` agent turns;
- every agent turn makes at most 2 structured calls (one protocol repair), each at most 2 model
  calls (one schema repair) → at most ``4 · (2(K + 1) + 3) = 8K + 20`` model calls
  (68 for the default ``K = 6``).

The premise-reuse rule is what usually ends a line early: a side's stance is finite, so an honest
model runs out of new premises; the cap catches a model that invents premises forever.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from argnb.dialectic import prompts
from argnb.dialectic.attacks import Attack, admissible_kinds, check_attack, defeats, well_formed
from argnb.dialectic.novelty import Embed, PremiseMemory
from argnb.dialectic.schema import (
    Argument,
    AttackAnswer,
    Case,
    MainArgumentAnswer,
)
from argnb.dialectic.semantics import grounded_labelling
from argnb.errors import InvalidOutput
from argnb.llm.base import Backend, Message, Options
from argnb.llm.structured import Structured, structured_call
from argnb.transcript import Transcript, Turn

T = TypeVar("T", bound=BaseModel)

DEFAULT_MAX_ATTACKS = 6


def call_bound(max_attacks: int = DEFAULT_MAX_ATTACKS) -> int:
    """Most model calls one dialogue can make (see the module docstring)."""
    return 4 * turn_bound(max_attacks)


def turn_bound(max_attacks: int = DEFAULT_MAX_ATTACKS) -> int:
    """Most agent turns (accepted or not) one dialogue can have, repairs not counted."""
    return 2 * (max_attacks + 1) + 3


@dataclass
class Attempt:
    """The outcome of asking an agent, with at most one protocol repair."""

    value: Any = None
    result: Structured | None = None
    problems: list[str] = field(default_factory=list)


class DialecticProtocol:
    """Runs one dialogue; every turn goes to ``self.transcript`` as it happens.

    ``on_turn`` is called with each new :class:`~argnb.transcript.Turn` (the CLI prints them).
    ``embed`` (for example ``backend.embed``) makes the near-duplicate test semantic as well as
    lexical.
    """

    def __init__(
        self,
        backend: Backend,
        case: Case,
        *,
        max_attacks: int = DEFAULT_MAX_ATTACKS,
        embed: Embed | None = None,
        options: Options | None = None,
        on_turn: Callable[[Turn], None] | None = None,
    ) -> None:
        if max_attacks < 1:
            raise ValueError("max_attacks must be at least 1")
        self.backend = backend
        self.case = case
        self.max_attacks = max_attacks
        self.options = options
        self.on_turn = on_turn
        self.memory = PremiseMemory(embed=embed)
        self.args: dict[str, tuple[int, Argument]] = {}
        self.attacks: list[Attack] = []
        self.calls = 0
        self.transcript = Transcript(
            kind="dialectic",
            title=case.issue,
            meta={
                "case": case.model_dump(),
                "max_attacks": max_attacks,
                "call_bound": call_bound(max_attacks),
                "backend": backend.name,
                "model": backend.model,
            },
        )

    # -- helpers -------------------------------------------------------------------------
    def name(self, side: int) -> str:
        return self.case.agents[side].name

    def _new_id(self) -> str:
        return f"A{len(self.args) + 1}"

    def _record(self, turn: Turn) -> Turn:
        self.transcript.add(turn)
        if self.on_turn is not None:
            self.on_turn(turn)
        return turn

    def system(self, side: int) -> Message:
        stance = self.case.agents[side]
        return Message(
            role="system",
            content=prompts.render(
                "system", agent=stance.name, issue=self.case.issue, stance=stance.describe()
            ),
        )

    def _turn_fields(self, res: Structured | None) -> dict[str, Any]:
        if res is None:
            return {}
        last = res.replies[-1]
        return {
            "usage": res.usage,
            "latency_s": res.latency_s,
            "model": last.model,
            "backend": last.backend,
        }

    def ask(
        self,
        side: int,
        task: str,
        schema: type[T],
        check: Callable[[T], list[str]],
        *,
        role: str,
        line: int | None,
        fallback: str,
        strict: bool = True,
    ) -> Attempt:
        """Ask ``side`` for a ``schema`` answer; rule-check it; one repair; record rejections.

        ``strict=False`` (the synthesis steps) keeps a schema-valid second answer that still has
        problems; they are returned in ``problems`` and recorded in the turn's payload.
        """
        messages = [self.system(side), Message(role="user", content=task)]
        attempt = Attempt()
        for n in (1, 2):
            try:
                res = structured_call(self.backend, messages, schema, options=self.options)
            except InvalidOutput as exc:
                self.calls += 2
                attempt.problems = [f"the answer did not fit the schema: {exc.errors}"]
                raw = exc.raw
                res = None
            else:
                self.calls += len(res.replies)
                attempt.problems = check(res.value)
                raw = res.raw
                if not attempt.problems or (n == 2 and not strict):
                    attempt.value, attempt.result = res.value, res
                    return attempt
            self._record(
                Turn(
                    speaker=self.name(side),
                    role=f"rejected {role}",
                    text="; ".join(attempt.problems),
                    payload={"attempt": n, "problems": attempt.problems, "raw": raw[:2000]},
                    round=line,
                    valid=False,
                    **self._turn_fields(res),
                )
            )
            if n == 2:
                break
            repair = prompts.render(
                "repair",
                problems="\n".join(f"- {p}" for p in attempt.problems),
                fallback=fallback,
            )
            messages = [
                *messages,
                Message(role="assistant", content=raw or "{}"),
                Message(role="user", content=repair),
            ]
        return attempt

    # -- phase 1: argument construction --------------------------------------------------
    def main_argument(self, side: int, line: int) -> str | None:
        """Ask ``side`` for its main argument; return its id (None if it gave no valid one)."""
        used = self.memory.used(self.name(side))
        avoid = (
            "Do not use these premises again (you used them earlier):\n"
            + "\n".join(f"- {p}" for p in used)
            + "\n"
            if used
            else ""
        )
        task = prompts.render("argue", issue=self.case.issue, avoid=avoid)

        def check(ans: MainArgumentAnswer) -> list[str]:
            problems = well_formed(ans.argument)
            for new, old in self.memory.reused(self.name(side), ans.argument.premises()):
                problems.append(f"premise {new!r} repeats your earlier premise {old!r}")
            return problems

        got = self.ask(
            side,
            task,
            MainArgumentAnswer,
            check,
            role="argue",
            line=line,
            fallback="Give one well-formed argument.",
        )
        if got.value is None:
            return None
        arg = got.value.argument
        arg_id = self._new_id()
        self.args[arg_id] = (side, arg)
        self.memory.remember(self.name(side), arg.premises())
        self._record(
            Turn(
                speaker=self.name(side),
                role="argue",
                text=arg.claim,
                payload={
                    "phase": "argument",
                    "line": line,
                    "arg_id": arg_id,
                    "argument": arg.model_dump(),
                },
                round=line,
                **self._turn_fields(got.result),
            )
        )
        return arg_id

    # -- phase 2: rebuttal ---------------------------------------------------------------
    def attack_turn(self, side: int, target_id: str, line: int) -> str | None:
        """Ask ``side`` to defeat ``target_id``; return the new argument's id, or None."""
        target_side, target = self.args[target_id]
        kinds = admissible_kinds(target)
        base = {"phase": "rebuttal", "line": line, "target_id": target_id}
        if not kinds:
            self._record(
                Turn(
                    speaker=self.name(side),
                    role="pass",
                    text=f"cannot counter {target_id}: it admits neither rebut nor undercut",
                    payload={**base, "can_defeat": "NO", "reason": "no admissible attack"},
                    round=line,
                )
            )
            return None
        used = self.memory.used(self.name(side))
        task = prompts.render(
            "attack",
            opponent=self.name(target_side),
            target_id=target_id,
            target_json=json.dumps({"rules": target.model_dump()["rules"]}, ensure_ascii=False),
            conc=json.dumps(target.Conc, ensure_ascii=False),
            ass=json.dumps(target.Ass, ensure_ascii=False),
            admissible=", ".join(kinds),
            used="\n".join(f"- {p}" for p in used) or "(none yet)",
        )
        checked: dict[str, str] = {}

        def check(ans: AttackAnswer) -> list[str]:
            if ans.can_defeat == "NO":
                return []
            verdict = check_attack(
                ans.attack,
                ans.target,
                target,
                ans.argument,
                side=self.name(side),
                memory=self.memory,
            )
            checked["on"] = verdict.on
            return verdict.problems

        got = self.ask(
            side,
            task,
            AttackAnswer,
            check,
            role="attack",
            line=line,
            fallback='If you cannot, answer "can_defeat": "NO".',
        )
        ans: AttackAnswer | None = got.value
        if ans is None or ans.can_defeat == "NO" or ans.argument is None:
            reason = "answered NO" if ans is not None else "no valid attack after one repair"
            self._record(
                Turn(
                    speaker=self.name(side),
                    role="pass",
                    text=f"cannot counter {target_id} ({reason})",
                    payload={**base, "can_defeat": "NO", "reason": reason},
                    round=line,
                    **self._turn_fields(got.result),
                )
            )
            return None
        arg_id = self._new_id()
        self.args[arg_id] = (side, ans.argument)
        self.memory.remember(self.name(side), ans.argument.premises())
        att = Attack(arg_id, target_id, ans.attack, checked.get("on", ans.target))  # type: ignore[arg-type]
        self.attacks.append(att)
        defeated = (arg_id, target_id) in defeats(self.attacks)
        self._record(
            Turn(
                speaker=self.name(side),
                role="attack",
                text=f"{ans.attack}s {target_id}: {ans.argument.claim}",
                payload={
                    **base,
                    "arg_id": arg_id,
                    "can_defeat": "YES",
                    "attack": ans.attack,
                    "target": att.on,
                    "argument": ans.argument.model_dump(),
                    "defeats": defeated,
                },
                round=line,
                **self._turn_fields(got.result),
            )
        )
        return arg_id

    def line(self, proponent: int, line: int) -> dict[str, Any]:
        """Run one line of dispute about ``proponent``'s main argument; return its verdict."""
        main = self.main_argument(proponent, line)
        if main is None:
            verdict = {"line": line, "main_id": None, "status": "missing", "reason": "no argument"}
        else:
            chain, last, mover = [main], main, 1 - proponent
            reason = ""
            while True:
                if len(chain) - 1 >= self.max_attacks:
                    reason = f"turn cap reached ({self.max_attacks} attacks)"
                    break
                new = self.attack_turn(mover, last, line)
                if new is None:
                    reason = f"{self.name(mover)} cannot counter {last}"
                    break
                chain.append(new)
                last, mover = new, 1 - mover
            chain_set = set(chain)
            ds = {d for d in defeats(self.attacks) if d[0] in chain_set and d[1] in chain_set}
            status = grounded_labelling(chain, ds)[main]
            verdict = {
                "line": line,
                "main_id": main,
                "proponent": self.name(proponent),
                "status": "justified" if status == "IN" else "defeated",
                "reason": reason,
                "chain": chain,
            }
        self._record(
            Turn(
                speaker="protocol",
                role="verdict",
                text=f"line {line}: {verdict['main_id']} {verdict['status']}"
                + (f" ({verdict['reason']})" if verdict["reason"] else ""),
                payload=verdict,
                round=line,
            )
        )
        return verdict

    # -- the whole protocol --------------------------------------------------------------
    def run(self) -> Dialogue:
        from argnb.dialectic.record import labelling
        from argnb.dialectic.synthesis import synthesize

        lines: list[dict[str, Any]] = []
        outcome, final_answer = "none", ""
        for side, no in ((0, 1), (1, 2)):
            v = self.line(side, no)
            lines.append(v)
            if v["status"] == "justified":
                outcome = "justified"
                final_answer = self.args[v["main_id"]][1].claim
                break
        else:
            mains = [v["main_id"] for v in lines]
            if all(mains):
                synth = synthesize(self, self.args[mains[0]][1], self.args[mains[1]][1])
                outcome = "synthesis"
                final_answer = synth.get("final_answer", "")
        tr = self.transcript
        turns = sum(1 for t in tr.turns if t.speaker != "protocol" and t.valid)
        tr.outcome = {
            "terminated": True,
            "outcome": outcome,
            "final_answer": final_answer,
            "turns": turns,
            "rejected": sum(1 for t in tr.turns if not t.valid),
            "model_calls": self.calls,
            "lines": lines,
            "labelling": labelling(tr),
        }
        return Dialogue(tr)


def run_dialogue(
    backend: Backend,
    case: Case | str,
    *,
    max_attacks: int = DEFAULT_MAX_ATTACKS,
    embed: Embed | None = None,
    options: Options | None = None,
    on_turn: Callable[[Turn], None] | None = None,
) -> Dialogue:
    """Run the protocol on ``case`` (a :class:`Case` or an example name like ``"camera"``)."""
    if isinstance(case, str):
        from argnb.dialectic.examples import load_example

        case = load_example(case)
    proto = DialecticProtocol(
        backend, case, max_attacks=max_attacks, embed=embed, options=options, on_turn=on_turn
    )
    return proto.run()


class Dialogue:
    """A finished dialogue: the transcript plus the views every notebook wants."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript

    @classmethod
    def load(cls, path: str) -> Dialogue:
        return cls(Transcript.load(path))

    @property
    def outcome(self) -> str:
        return self.transcript.outcome.get("outcome", "none")

    @property
    def final_answer(self) -> str:
        return self.transcript.outcome.get("final_answer", "")

    @property
    def terminated(self) -> bool:
        return bool(self.transcript.outcome.get("terminated"))

    @property
    def lines(self) -> list[dict[str, Any]]:
        return self.transcript.outcome.get("lines", [])

    @property
    def labelling(self) -> dict[str, str]:
        return self.transcript.outcome.get("labelling", {})

    @property
    def arguments(self):
        from argnb.dialectic.record import arguments

        return arguments(self.transcript)

    @property
    def attacks(self) -> list[Attack]:
        from argnb.dialectic.record import attacks

        return attacks(self.transcript)

    def synthesis(self) -> dict[str, Any]:
        """The three synthesis steps' payloads (empty if there was no synthesis)."""
        return {
            t.role: t.payload
            for t in self.transcript.turns
            if t.valid and t.role in ("characterize", "generalize", "answer")
        }

    def summary(self) -> dict[str, Any]:
        """The one-line JSON the CLI prints last."""
        o = self.transcript.outcome
        return {
            "issue": self.transcript.title,
            "terminated": self.terminated,
            "turns": o.get("turns", 0),
            "rejected": o.get("rejected", 0),
            "model_calls": o.get("model_calls", 0),
            "outcome": self.outcome,
            "final_answer": self.final_answer,
            "lines": [
                {k: v for k, v in line.items() if k in ("line", "main_id", "status", "reason")}
                for line in self.lines
            ],
            "labelling": self.labelling,
            "backend": self.transcript.meta.get("backend", ""),
            "model": self.transcript.meta.get("model", ""),
        }

    def to_map(self, **kw: Any):
        """The dialogue as an :class:`argnb.maps.ArgumentMap` (coloured by grounded semantics)."""
        from argnb.dialectic.mapping import dialogue_map

        return dialogue_map(self.transcript, **kw)

    def _repr_html_(self) -> str:
        from argnb.dialectic.views import dialogue_html

        return dialogue_html(self.transcript)

    def __repr__(self) -> str:
        return (
            f"Dialogue(outcome={self.outcome!r}, turns={self.transcript.outcome.get('turns')}, "
            f"final_answer={self.final_answer!r})"
        )
