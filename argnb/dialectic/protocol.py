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
from typing import Any, TypeVar

from pydantic import BaseModel

from argnb.agents import Agent, Response, bullets
from argnb.dialectic import prompts
from argnb.dialectic.attacks import Attack, admissible_kinds, check_attack, defeats, well_formed
from argnb.dialectic.case import Case
from argnb.dialectic.novelty import Embed, PremiseMemory
from argnb.dialectic.payloads import ArgumentMove, AttackMove, LineVerdict, Pass
from argnb.dialectic.schemas import Argument, AttackAnswer, MainArgumentAnswer
from argnb.dialectic.semantics import grounded_labelling
from argnb.dialectic.synthesis import synthesize
from argnb.gate import Gate
from argnb.llm.base import Backend, Options
from argnb.transcript import Payload, Transcript, Turn
from argnb.words import drop_repeats

T = TypeVar("T", bound=BaseModel)

DEFAULT_MAX_ATTACKS = 6


def call_bound(max_attacks: int = DEFAULT_MAX_ATTACKS) -> int:
    """Most model calls one dialogue can make (see the module docstring)."""
    return 4 * turn_bound(max_attacks)


def turn_bound(max_attacks: int = DEFAULT_MAX_ATTACKS) -> int:
    """Most agent turns (accepted or not) one dialogue can have, repairs not counted."""
    return 2 * (max_attacks + 1) + 3


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
        self.case = case
        self.max_attacks = max_attacks
        self.on_turn = on_turn
        self.agents = [
            Agent(
                stance.name,
                backend,
                options,
                system=prompts.render(
                    "system", agent=stance.name, issue=case.issue, stance=stance.describe()
                ),
                gate=Gate(instructions=prompts.fixed()),
            )
            for stance in case.agents
        ]
        self.memory = PremiseMemory(embed=embed)
        self.args: dict[str, tuple[int, Argument]] = {}
        self.attacks: list[Attack] = []
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

    def add_argument(self, side: int, arg: Argument) -> str:
        """Register an accepted argument of ``side``; return its new id."""
        arg_id = self._new_id()
        self.args[arg_id] = (side, arg)
        return arg_id

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
    ) -> Response[T]:
        """Ask ``side`` for a ``schema`` answer; rule-check it; one repair; record rejections.

        ``strict=False`` (the synthesis steps) keeps a schema-valid second answer that still has
        problems; they are returned in ``problems``. The accepted answer is not recorded here:
        the caller records it with :meth:`accept` and its typed payload.
        """
        resp = self.agents[side].respond(
            task,
            schema,
            check=check,
            role=role,
            round=line,
            strict=strict,
            repair=lambda problems: prompts.render(
                "repair", problems=bullets(problems), fallback=fallback
            ),
        )
        for turn in resp.turns[:-1] if resp.valid else resp.turns:
            self._record(turn)
        return resp

    def accept(self, resp: Response, payload: Payload, text: str, role: str | None = None) -> Turn:
        """Record an accepted answer's turn (its cost as measured) with the protocol's payload.

        The spoken ``text`` never says a sentence twice (small models loop; the rule of
        :func:`argnb.words.drop_repeats`); the payload's arguments, which the attack rules match
        statements against, are kept as answered."""
        update: dict[str, Any] = {"payload": payload, "text": drop_repeats(text)}
        if role is not None:
            update["role"] = role
        return self._record(resp.turn.model_copy(update=update))

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
        arg_id = self.add_argument(side, arg)
        self.memory.remember(self.name(side), arg.premises())
        self.accept(got, ArgumentMove(line=line, arg_id=arg_id, argument=arg), arg.claim)
        return arg_id

    # -- phase 2: rebuttal ---------------------------------------------------------------
    def attack_turn(self, side: int, target_id: str, line: int) -> str | None:
        """Ask ``side`` to defeat ``target_id``; return the new argument's id, or None."""
        target_side, target = self.args[target_id]
        kinds = admissible_kinds(target)
        if not kinds:
            self._record(
                Turn(
                    speaker=self.name(side),
                    role="pass",
                    text=f"cannot counter {target_id}: it admits neither rebut nor undercut",
                    payload=Pass(line=line, target_id=target_id, reason="no admissible attack"),
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
            payload = Pass(line=line, target_id=target_id, reason=reason)
            text = f"cannot counter {target_id} ({reason})"
            if ans is not None:  # a valid "NO": the answer's own turn, with what it cost
                self.accept(got, payload, text, role="pass")
            else:  # the rejections are recorded already; the protocol notes the pass
                self._record(
                    Turn(
                        speaker=self.name(side), role="pass", text=text, payload=payload, round=line
                    )
                )
            return None
        arg_id = self.add_argument(side, ans.argument)
        self.memory.remember(self.name(side), ans.argument.premises())
        att = Attack(arg_id, target_id, ans.attack, checked.get("on", ans.target))  # type: ignore[arg-type]
        self.attacks.append(att)
        move = AttackMove(
            line=line,
            target_id=target_id,
            arg_id=arg_id,
            attack=ans.attack,
            target=att.on,
            argument=ans.argument,
            defeats=(arg_id, target_id) in defeats(self.attacks),
        )
        self.accept(got, move, f"{ans.attack}s {target_id}: {ans.argument.claim}")
        return arg_id

    def line(self, proponent: int, line: int) -> dict[str, Any]:
        """Run one line of dispute about ``proponent``'s main argument; return its verdict."""
        main = self.main_argument(proponent, line)
        if main is None:
            verdict = {
                "line": line,
                "main_id": None,
                "proponent": self.name(proponent),
                "status": "missing",
                "reason": "no argument",
            }
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
                text=LineVerdict(**verdict).sentence(),
                payload=LineVerdict(**verdict),
                round=line,
            )
        )
        return verdict

    # -- the whole protocol --------------------------------------------------------------
    def run(self) -> Dialogue:
        lines: list[dict[str, Any]] = []
        outcome, final_answer = "none", ""
        for side, no in ((0, 1), (1, 2)):
            v = self.line(side, no)
            lines.append(v)
            if v["status"] == "justified":
                outcome = "justified"
                final_answer = drop_repeats(self.args[v["main_id"]][1].claim)
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
            "model_calls": tr.calls,
            "lines": lines,
            "labelling": grounded_labelling(list(self.args), defeats(self.attacks)),
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
