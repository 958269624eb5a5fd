"""The whole command line under a fuzzer of arguments: exit 0, or exit 2 with one line.

Every sub-command of ``argnb`` (walked from the parser, so a new command is fuzzed without a
change here) is called in-process, ``main(argv)``, with random values for its options: choices
and junk, numbers in and out of range, and paths to files a careless or hostile user hands us
(missing, empty, binary, Latin-1, a JSON object, another application's SQLite file, a folder,
real debates and a real memory). Model calls go to a scripted backend that fills every answer
schema minimally (``argnb.config.connect`` is replaced), so runs go deep and stay fast.

Not fuzzed: commands that reach the network or start programs (``model fetch``, ``fallacy
fetch``, ``doctor``, ``course open``, ``course site``: a drawn empty ``--out`` built the whole site,
executing every lesson on the embedded model, 6 minutes in one run) and ``exercises grade`` (it
starts a sandbox per notebook). Their own tests cover their bad input (tests/site for the site).

``ARGNB_FUZZ_EXAMPLES=N`` runs N examples (default 60 in CI) and prints the count of invocations
and outcomes.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import argnb.config
from argnb.cli import build_parser, main
from argnb.llm import ScriptedBackend

EXAMPLES = int(os.environ.get("ARGNB_FUZZ_EXAMPLES", "60"))
SKIP = {
    ("model",), ("fallacy", "fetch"), ("doctor",), ("course", "open"), ("course", "site"),
    ("exercises", "grade"),
    ("class", "try"),  # a whole class until Ctrl-C (as course open's JupyterLab): test_trial.py
}  # fmt: skip
OUTCOMES: Counter[str] = Counter()
ERRORS: Counter[str] = Counter()
SAMPLES: list[str] = []
#: ARGNB_FUZZ_COLLECT=1: record every failure and go on (to hunt), instead of stopping at one
COLLECT = bool(os.environ.get("ARGNB_FUZZ_COLLECT"))
FAILURES: list[dict[str, Any]] = []

DEBATES = [
    {"debate_id": "d1", "topic": "Close the centre to cars", "turn": i, "stance": s, "text": t}
    for i, (s, t) in enumerate(
        [
            ("pro", "Fumes from cars harm the lungs of children who walk to school every day."),
            ("con", "Shops in the centre will close when their customers can no longer drive."),
            ("pro", "Oslo closed its centre to cars and its shops kept their customers and sales."),
            ("con", "Buses are slow and the old and the disabled depend on their cars to shop."),
        ]
    )
]


def _leaves(p: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, p
        return
    for name, sp in subs[0].choices.items():
        yield from _leaves(sp, (*path, name))


COMMANDS = [(path, p) for path, p in _leaves(build_parser()) if path[:2] not in SKIP
            and path[:1] not in SKIP]  # fmt: skip


def minimal(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest instance of a JSON schema (enough for an answer to validate)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return minimal(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return minimal(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal(v, defs) for k, v in props.items() if k in schema.get("required", props)}
    if kind == "array":
        return [minimal(schema.get("items", {}), defs) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "because the fumes harm children"[: schema.get("maxLength", 40)].ljust(
            schema.get("minLength", 0), "x"
        )
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return None


def _answer(req) -> Any:
    return minimal(req.schema) if req.schema else "A plain reply \x1b[31m with \u202e text."


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> dict[str, str]:
    """Files a user might pass, good and bad (made once; commands that write go elsewhere)."""
    d = tmp_path_factory.mktemp("pool")
    files: dict[str, bytes] = {
        "empty.jsonl": b"",
        "blank.jsonl": b"\n \n",
        "binary.jsonl": bytes(range(256)),
        "latin1.txt": "caf\xe9\n".encode("latin-1"),
        "object.json": b'{"a": {"b": [1, 2]}}',
        "list.json": b'["I think so.", "/end"]',
        "debates.jsonl": "".join(json.dumps(r) + "\n" for r in DEBATES).encode(),
        "debates.csv": b"debate_id,topic,turn,stance,text\nd1,T,0,pro," + b"word " * 20 + b"\n",
        "garbage.csv": b'a,"b\n\x00,,,\n',
        "notes.txt": b"First point.\n\nSecond point.\n",
        "session.yaml": b"topic: Phones in class?\nturns: 3\n",
        "bad.yaml": b"topic: [unclosed\n",
        "x.docx": b"PK\x03\x04",
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
    other = sqlite3.connect(d / "app.db")
    other.execute("CREATE TABLE users (name TEXT)")
    other.commit()
    other.close()
    (d / "folder").mkdir()
    assert main(["debate", "memory", "build", "--from", "example", "--db", str(d / "mem.db"),
                 "--quiet"]) == 0  # fmt: skip
    import argnb.cli_common
    from argnb.roundtable.testing import table_backend
    from tests.debate.test_generate import role_backend

    with pytest.MonkeyPatch.context() as mp:  # two results files made the real way
        mp.setattr(argnb.cli_common, "backend_from_args", lambda a: table_backend())
        argv = ["roundtable", "run", "--topic", "Phones in class?", "--turns", "4", "--quiet"]
        assert (
            main([*argv, "--human-script", str(d / "list.json"), "--out", str(d / "session.json")])
            == 0
        )
        mp.setattr(argnb.cli_common, "backend_from_args", lambda a: role_backend())
        argv = ["debate", "next", "--debates", str(d / "debates.jsonl"), "--cut", "2"]
        assert main([*argv, "--method", "llm", "--out", str(d / "next.jsonl"), "--quiet"]) == 0
    names = [*files, "app.db", "folder", "mem.db", "session.json", "next.jsonl"]
    return {n: str(d / n) for n in names} | {"missing": str(d / "missing.jsonl")}


NUMBERS = ["0", "1", "2", "3", "-1", "7", "x", "1.5", "nan", "inf", "1e-9"]
TEXTS = ["", "llm", "rdebater", "naive-rag", "ollama:tiny", "local", "zero", "few@ollama:tiny",
         "a,b", "ollama:tiny,openai:tiny", ":", "nobackend:model", "Ban cars?", "\x1b[2J\u202e",
         "d1", "nope", "pro", "-x", "cot@", "llm@local:x"]  # fmt: skip
HOSTS = ["http://127.0.0.1:9", "not a url", "::::", ""]
OUTPUTS = ["out.jsonl", "out.json", "out.html", "out.png", "out.md", "out.csv", "out.argdown",
           "out.docx", "sub/dir/out.jsonl", "."]  # fmt: skip
PATHY = {"data", "db", "path", "debates", "history", "utterances", "pred", "human",
         "schemes_from", "file", "session", "config", "human_script", "transcript", "root",
         "folder", "results", "files", "submissions"}  # fmt: skip
#: the files that fit an option (drawn two times in three, so runs get past the first check)
FITS = {
    "db": ["mem.db"],
    "debates": ["debates.jsonl"],
    "history": ["debates.jsonl", "notes.txt"],
    "utterances": ["debates.jsonl", "next.jsonl", "session.json"],
    "session": ["session.json"],
    "results": ["next.jsonl"],
    "data": ["debates.jsonl"],
    "path": ["debates.jsonl", "debates.csv"],
    "human_script": ["list.json", "notes.txt"],
    "config": ["session.yaml"],
}
WRITES = {"out", "markdown", "map", "export", "to", "feedback"}


def _value(draw, action: argparse.Action, pool: dict[str, str], out: Path) -> str:
    """One random value for ``action``: mostly plausible, sometimes junk."""
    if action.choices is not None and draw(st.integers(0, 5)):
        return str(draw(st.sampled_from(list(action.choices))))
    dest = action.dest
    if dest in PATHY:
        fits = [pool[n] for n in FITS.get(dest, ())]
        if fits and draw(st.integers(0, 2)):
            return draw(st.sampled_from(fits))
        return draw(st.sampled_from(list(pool.values())))
    if dest in WRITES:
        return str(out / draw(st.sampled_from(OUTPUTS)))
    if dest in ("host", "base_url"):
        return draw(st.sampled_from(HOSTS))
    if dest in ("delay", "port"):  # a pause between turns: junk, but never a long one
        return draw(st.sampled_from(["0", "-1", "nan", "inf", "x", "0.001"]))
    typ = getattr(action.type, "__name__", "")
    if typ in ("positive_int", "int", "positive_float", "float", "_natural") or dest in (
        "k", "delay", "max_revisions", "seed", "port",
    ):  # fmt: skip
        return draw(st.sampled_from(NUMBERS))
    return draw(st.sampled_from(TEXTS) | st.text(max_size=12))


@st.composite
def invocations(draw, pool: dict[str, str], out: Path) -> list[str]:
    path, parser = draw(st.sampled_from(COMMANDS))
    argv = list(path)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:  # a positional: nearly always given
            n = 2 if action.nargs in ("+", "*") and draw(st.booleans()) else 1
            if action.nargs == "?" and not draw(st.integers(0, 3)):
                n = 0
            argv += [_value(draw, action, pool, out) for _ in range(n)]
            continue
        if not (action.required or draw(st.integers(0, 2)) == 0):
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(flag)
        else:
            argv += [flag, _value(draw, action, pool, out)]
    return argv


def _one_line(err: str) -> bool:
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    return len(lines) == 1 and "Traceback" not in err


@pytest.fixture
def sealed(monkeypatch, tmp_path):
    """No model, network, user config or user cache: a scripted backend behind every connect."""

    def connect(backend=None, model=None, **kw):
        return ScriptedBackend(_answer, model=model or "fuzz")

    monkeypatch.setattr(argnb.config, "connect", connect)
    monkeypatch.setenv("ARGNB_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("ARGNB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_command_exits_0_or_2_with_one_line(sealed, pool, capsys, data):
    out = Path(tempfile.mkdtemp(dir=sealed))
    argv = data.draw(invocations(pool, out), label="argv")
    OUTCOMES["invocations"] += 1
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: a bad flag or value
        code = exc.code
    except Exception as exc:
        if not COLLECT:
            raise
        code = f"{type(exc).__name__}: {str(exc)[:120]}"
    captured = capsys.readouterr()
    if COLLECT and (code not in (0, 1, 2) or (code == 2 and not _one_line(captured.err))):
        FAILURES.append({"argv": argv, "code": code, "err": captured.err[-300:]})
        return
    allowed = (0, 1, 2) if argv[:2] == ["exercises", "release"] else (0, 2)  # 1: --check stale
    assert code in allowed, (argv, code, captured.err[-2000:])
    OUTCOMES[f"exit {code}"] += 1
    OUTCOMES[next(" ".join(p) for p, _ in COMMANDS if argv[: len(p)] == list(p))] += 1
    if code == 2:
        assert _one_line(captured.err), (argv, captured.err[-2000:])
        ERRORS[" ".join(argv[:2])] += 1
        if os.environ.get("ARGNB_FUZZ_REPORT"):
            SAMPLES.append(captured.err.strip().splitlines()[-1][:160])


def teardown_module() -> None:
    if OUTCOMES:
        total = {k: v for k, v in OUTCOMES.items() if k == "invocations" or k.startswith("exit")}
        print(f"\nfuzz: {dict(sorted(total.items()))}")
        if os.environ.get("ARGNB_FUZZ_REPORT"):
            Path(os.environ["ARGNB_FUZZ_REPORT"]).write_text(
                json.dumps(
                    {
                        "outcomes": OUTCOMES,
                        "errors": ERRORS,
                        "samples": SAMPLES,
                        "failures": FAILURES,
                    },
                    indent=1,
                    default=str,
                ),
                encoding="utf-8",
            )
