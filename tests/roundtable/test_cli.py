"""``argnb roundtable``: run (scripted human), replay, export, and one-line errors."""

from __future__ import annotations

import json

import pytest

import argnb.cli_common
from argnb.cli import main
from argnb.roundtable.testing import table_backend


@pytest.fixture
def scripted(monkeypatch):
    """The CLI's backend flags give a scripted table instead of a model."""
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda args: table_backend())


def test_run_prints_turns_and_a_json_summary(scripted, tmp_path, capsys) -> None:
    script = tmp_path / "human.json"
    script.write_text(json.dumps(["I would allow phones for research.", "/pass"]))
    out = tmp_path / "s.json"
    md = tmp_path / "s.md"
    amap = tmp_path / "map.json"
    code = main(
        [
            "roundtable",
            "run",
            "--topic",
            "Phones in class?",
            "--human-script",
            str(script),
            "--turns",
            "6",
            "--analyze-every",
            "3",
            "--human",
            "Ann",
            "--out",
            str(out),
            "--markdown",
            str(md),
            "--map",
            str(amap),
            "--json",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["turns"] == 6 and summary["human"] == "Ann"
    assert summary["speakers"] == ["Deliberator 1", "Deliberator 2", "Ann"] * 2
    assert summary["overrides"] == 2 and summary["analyses"] == 2  # D1 named when Ann is due
    assert summary["analysis"]["agreements"] == ["Rules help."]
    assert any(line.startswith("[Ann · human] I would allow phones") for line in lines)
    assert out.exists() and md.read_text().startswith("# Roundtable: Phones in class?")
    from argnb.maps import validate_aif

    validate_aif(json.loads(amap.read_text()))

    # replay gives the same summary, turn by turn
    assert main(["roundtable", "replay", str(out), "--json"]) == 0
    replayed = capsys.readouterr().out.strip().splitlines()
    assert json.loads(replayed[-1]) == summary
    assert len(replayed) > 10

    # export writes the other formats from the saved session
    ad, gml = tmp_path / "m.argdown", tmp_path / "m.graphml"
    assert main(["roundtable", "export", str(out), "--map", str(ad)]) == 0
    assert main(["roundtable", "export", str(out), "--map", str(gml)]) == 0
    assert "We should allow it with rules" in ad.read_text() and gml.read_text().startswith("<?xml")


def test_a_text_file_script_and_a_yaml_config(scripted, tmp_path, capsys) -> None:
    script = tmp_path / "human.txt"
    script.write_text("My first point.\n/end\n")
    cfg = tmp_path / "session.yaml"
    cfg.write_text(
        "topic: School uniforms?\nhuman: Bo\nturns: 12\nanalyze_every: 0\n"
        "deliberators:\n  - name: Lena\n    perspective: a teacher\n  - name: Max\n"
    )
    assert (
        main(
            [
                "roundtable",
                "run",
                "--config",
                str(cfg),
                "--human-script",
                str(script),
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["speakers"] == ["Lena", "Max", "Bo", "Lena", "Max", "Bo"]
    assert summary["ended"] == "human" and summary["analyses"] == 1  # the final one


def test_terminal_human_ends_on_eof(scripted, monkeypatch, capsys) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("Hello there.\n"))
    assert (
        main(["roundtable", "run", "--topic", "Phones?", "--turns", "12", "--json", "--quiet"]) == 0
    )
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["ended"] == "human" and summary["speakers"].count("You") == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["roundtable", "run", "--turns", "3"], "no topic"),
        (
            ["roundtable", "run", "--topic", "Phones?", "--human-script", "/nope.txt"],
            "no human script",
        ),
        (["roundtable", "run", "--topic", "ok?", "--human-every", "1"], "human_every"),
        (
            ["roundtable", "run", "--topic", "ok?", "--fallacy-check", "guess"],
            "unknown fallacy check",
        ),
        (["roundtable", "replay", "/nope.json"], "no saved session"),
        (["roundtable", "export", "/nope.json", "--map", "m.png"], "no saved session"),
    ],
)
def test_errors_are_one_line_with_exit_2(scripted, argv, message, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unknown_map_format(scripted, tmp_path, capsys) -> None:
    out = tmp_path / "s.json"
    main(["roundtable", "run", "--topic", "Phones?", "--turns", "1", "--out", str(out), "--quiet"])
    capsys.readouterr()
    assert main(["roundtable", "export", str(out), "--map", str(tmp_path / "m.png")]) == 2
    assert ".argdown" in capsys.readouterr().err


def test_21_8_host_reaches_every_seat_given_by_spec(tmp_path, capsys) -> None:
    """Before: ``--host`` reached only seats without a spec; ``ollama:`` seats went to 11434."""
    from argnb.llm.testserver import ProtocolServer

    script = tmp_path / "human.json"
    script.write_text(json.dumps(["I would allow phones for research."]))
    engine = table_backend()
    with ProtocolServer(engine, models=["tiny"]) as srv:
        code = main(
            [
                "roundtable",
                "run",
                "--topic",
                "Phones in class?",
                "--deliberators",
                "ollama:tiny,ollama:tiny",
                "--moderator",
                "ollama:tiny",
                "--fallacy-check",
                "zero@ollama:tiny",
                "--turns",
                "3",
                "--human-script",
                str(script),
                "--host",
                srv.url,
                "--timeout",
                "30",
                "--no-cache",
                "--json",
                "--quiet",
            ]
        )
        served = [path for path, _ in srv.requests]
    err = capsys.readouterr().err
    assert code == 0, err
    assert served.count("/api/chat") == len(engine.requests)  # every model call came here
    # two deliberators, the moderator's decisions, the analyzer and the fallacy checks
    assert len(engine.requests) >= 5


HOSTILE = "I agree\x1b[2J\x1b]0;pwned\x07 with \u202eexe.txt\r and \x9b31m more"


def _assert_inert(text: str) -> None:
    for bad in ("\x1b", "\u202e", "\x07", "\r", "\x9b"):
        assert bad not in text, repr(bad)


def test_21_10_replay_prints_hostile_text_inert(scripted, tmp_path, capsys) -> None:
    script = tmp_path / "human.json"
    script.write_text(json.dumps([HOSTILE, "/end"]))
    out = tmp_path / "s.json"
    argv = ["roundtable", "run", "--topic", "Phones in class?", "--human-script", str(script)]
    assert main([*argv, "--turns", "3", "--out", str(out)]) == 0
    _assert_inert(capsys.readouterr().out)
    assert main(["roundtable", "replay", str(out)]) == 0
    shown = capsys.readouterr().out
    _assert_inert(shown)
    assert "I agree\\u001b[2J\\u001b]0;pwned\\u0007 with \\u202eexe.txt" in shown


def test_21_10_ask_prints_a_hostile_reply_inert_and_json_keeps_its_value(
    monkeypatch, capsys
) -> None:
    from argnb.llm import ScriptedBackend
    from argnb.terminal import inert

    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend([HOSTILE]))
    assert main(["ask", "hello"]) == 0
    shown = capsys.readouterr().out
    _assert_inert(shown)
    assert shown.startswith("I agree\\u001b[2J")
    line = inert(json.dumps({"text": HOSTILE}, ensure_ascii=False))
    _assert_inert(line)
    assert json.loads(line) == {"text": HOSTILE}  # --json lines keep their values


@pytest.mark.parametrize(("flag", "reuse"), [("0", False), ("1", True)])
def test_argnb_prefix_cache_reaches_every_seat_the_run_command_connects(
    flag, reuse, monkeypatch, tmp_path, capsys
) -> None:
    """The switch is LocalBackend's default, so every seat (connected through connect_spec or
    --backend) follows it; nothing is evaluated here (the session's run is replaced)."""
    from argnb.llm import LocalBackend
    from argnb.roundtable.session import Session

    monkeypatch.setenv("ARGNB_PREFIX_CACHE", flag)
    ran: list[Session] = []
    monkeypatch.setattr(Session, "run", lambda self, human: ran.append(self) or self)
    script = tmp_path / "human.json"
    script.write_text(json.dumps(["/pass"]))
    argv = ["roundtable", "run", "--topic", "Phones in class?", "--backend", "local"]
    argv += ["--deliberators", "local:smollm2-135m, local", "--analyzer", "local:smollm2-135m"]
    argv += ["--fallacy-check", "zero", "--human-script", str(script), "--turns", "2", "--quiet"]
    assert main(argv) == 0
    (s,) = ran
    seats = [s.moderator, *s.deliberators, s.analyzer]
    backends = [x.agent.backend for x in seats] + [s.fallacy.backend]
    assert all(isinstance(b, LocalBackend) for b in backends), backends
    assert [b.prefix_cache for b in backends] == [reuse] * 5
