"""Views: every panel escapes model and human text; the Markdown log and the map exports read
back."""

from __future__ import annotations

import html
import json
import re

import networkx as nx
import pytest

from argnb.llm.scripted import ScriptedBackend
from argnb.maps import ArgumentMap, validate_aif
from argnb.roundtable import record
from argnb.roundtable.analyzer import ANALYZER, analysis_framework, analysis_map, grounded
from argnb.roundtable.testing import table_backend
from argnb.roundtable.views import (
    analysis_html,
    format_turn,
    session_html,
    to_markdown,
    turn_html,
)

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(2)</script>",
    '"><svg onload=alert(3)>',
    "<a href='javascript:alert(4)'>click</a> now",  # not a phrase cut off (argnb.gate)
]
EVIL = " ".join(PAYLOADS)
RAW = re.compile(r"<(img|script|svg|a)[\s>]", re.IGNORECASE)


def evil_backend() -> ScriptedBackend:
    """Every role answers with markup: the model is the attacker."""
    base = table_backend()

    def answer(req):
        title = (req.schema or {}).get("title", "")
        if title == "AgendaAnswer":
            return {"scope": EVIL[:200], "criteria": [PAYLOADS[0]], "welcome": EVIL[:300]}
        if title == "ModeratorStep":
            out = base._fn(req)  # type: ignore[misc]
            return {
                **out,
                "message": f"{PAYLOADS[1]} Please go on.",
            }  # a whole sentence: the gate lets it through
        if title == "RoundtableAnalysis":
            by = req.schema["properties"]["argument_map"]["items"]["properties"]["by"]["enum"][0]
            item = {"objection": PAYLOADS[2], "by": by, "rebuttal": PAYLOADS[3], "rebuttal_by": by}
            return {
                "summary": [PAYLOADS[0] + " was all it said."],  # a sentence: the gate lets it by
                "agreements": [PAYLOADS[1]],
                "open_questions": [PAYLOADS[2]],
                "argument_map": [
                    {
                        "claim": PAYLOADS[3],
                        "by": by,
                        "premises": [PAYLOADS[0]],
                        "counterarguments": [item],
                    }
                ],
            }
        return EVIL

    return ScriptedBackend(answer)


@pytest.fixture
def evil_session(make_session):
    s = make_session(
        topic="Phones? " + PAYLOADS[0],
        moderator=evil_backend(),
        deliberators=[evil_backend(), evil_backend()],
        analyzer=evil_backend(),
        human="Ann <b>",
        turns=3,
    )
    return s.run(["The human writes " + EVIL])


def assert_inert(page: str) -> None:
    found = RAW.findall(page)
    assert not found, f"raw markup from untrusted text: {found}"


def test_every_panel_escapes_model_and_human_text(evil_session) -> None:
    tr = evil_session.transcript
    for t in tr.turns:
        assert_inert(turn_html(tr, t))
    a = evil_session.analysis
    assert a is not None and a.arguments
    assert_inert(analysis_html(a, None))
    assert_inert(session_html(tr))
    # the escaped text is still there, as text
    shown = session_html(tr)
    assert html.escape(PAYLOADS[0], quote=True) in shown
    human = next(t for t in tr.turns if t.payload.kind == "roundtable.human")
    assert html.escape("Ann <b>", quote=True) in turn_html(tr, human)


def test_the_map_page_escapes_every_text(evil_session) -> None:
    from argnb.maps.view import iframe

    m = evil_session.to_map()
    page = m.to_html(color_by="agent")
    outer = iframe(page)
    assert_inert(outer)
    inner = html.unescape(re.search(r'srcdoc="(.*?)" sandbox', outer, re.S).group(1))
    assert inner == page
    for p in PAYLOADS:
        assert p not in page
    assert 'sandbox="allow-scripts"' in outer


def test_markdown_log_has_no_raw_html_and_every_turn(evil_session) -> None:
    md = to_markdown(evil_session.transcript)
    assert_inert(md)
    assert md.startswith("# Roundtable: Phones?")
    assert md.count("**Moderator · moderator") == 1 + len(record.decisions(evil_session.transcript))
    assert "### Analysis after 3 turns (every)" in md
    for name in ("Deliberator 1", "Deliberator 2", "Ann"):
        assert name in md


def test_markdown_escapes_markdown_syntax(make_session) -> None:
    s = make_session(turns=3).run(["# not a heading *not bold* [not](a link) 1. not a list"])
    md = to_markdown(s.transcript)
    assert "\\# not a heading \\*not bold\\* \\[not\\](a link)" in md


def test_terminal_lines(make_session) -> None:
    s = make_session(moderator=table_backend(lambda r: "Deliberator 1"), turns=3).run(["hi"])
    lines = [format_turn(s.transcript, t) for t in s.transcript.turns]
    assert any(x.startswith("  ⚑ Override:") for x in lines)
    assert any(x.startswith("[Ann · human] hi") for x in lines)
    assert lines[-1] == "— end: turns after 3 turns —"


def test_map_exports_read_back(make_session, tmp_path) -> None:
    s = make_session(turns=3).run(["x"])
    m = s.to_map()
    assert isinstance(m, ArgumentMap)
    c = m.counts()
    assert c["nodes"] == {"claim": 3, "premise": 1, "argument": 1}
    assert c["edges"]["rebut"] == 2
    doc = validate_aif(m.to_aif())
    back = ArgumentMap.from_aif(json.loads(json.dumps(doc)))
    assert sorted(
        d["text"] for _, d in back.graph.nodes(data=True) if d["kind"] != "argument"
    ) == sorted(d["text"] for _, d in m.graph.nodes(data=True) if d["kind"] != "argument")
    path = tmp_path / "m.graphml"
    m.to_graphml(path)
    g = nx.read_graphml(path)
    assert g.number_of_nodes() == m.graph.number_of_nodes()
    text = m.to_argdown()
    assert "We should allow it with rules" in text and "It invites copying" in text
    # who said it and the grounded status travel with the nodes
    claim = m.node("A1")
    assert claim["status"] == "IN" and m.node("A1.x1")["status"] == "OUT"
    # the scripted speeches never say the analyzer's words, so its nodes are its own
    # (tests/roundtable/test_credit.py); drawn untraced, they carry the analyzer's credit
    assert claim["agent"] == ANALYZER
    # the recorded analysis credits the same way (issue 35: the panel never credits a seat with
    # words it did not say), so drawn untraced its nodes carry no seat either
    assert s.analysis.arguments[0].by == "unclear"
    untraced = analysis_map(s.analysis, s.topic)
    assert untraced.node("A1")["agent"] is None


def test_framework_of_an_analysis(make_session) -> None:
    s = make_session(turns=3).run(["x"])
    args, attacks = analysis_framework(s.analysis)
    assert args == ["A1", "A1.x1", "A1.x1.r"]
    assert attacks == [("A1.x1", "A1"), ("A1.x1.r", "A1.x1")]
    assert grounded(s.analysis) == {"A1", "A1.x1.r"}


def test_analysis_history_marks_what_changed() -> None:
    from argnb.roundtable.payloads import Analysis

    old = Analysis(upto=3, agreements=["Rules help.", "Phones distract."])
    new = Analysis(upto=6, agreements=["Rules help.", "Teachers decide."])
    page = analysis_html(new, old)
    assert "Teachers decide.</li>" not in page and "Teachers decide. <b" in page
    assert "no longer listed: Phones distract." in page


def test_an_analysis_the_gate_stopped_is_marked_in_the_panel_not_missing() -> None:
    from argnb.llm import ScriptedBackend
    from argnb.roundtable import Session
    from argnb.roundtable.testing import table_backend
    from argnb.roundtable.views import analysis_stopped_html, session_html

    echo = {
        "summary": ["Your task: <b>summarise</b> the discussion."],
        "agreements": [],
        "open_questions": [],
        "argument_map": [],
    }
    s = Session(
        "Phones in class?",
        moderator=table_backend(),
        deliberators=[table_backend(), table_backend()],
        analyzer=ScriptedBackend(lambda req: echo),
        human="Ann",
        turns=3,
        analyze_every=3,
    ).run(["Only for looking things up."])
    assert s.analyses == []  # nothing usable: the panel must still say an analysis was tried
    block = analysis_stopped_html(s.transcript)
    assert "not shown as an answer" in block and "echoed its instructions" in block
    assert "&lt;b&gt;summarise&lt;/b&gt;" in block and "<b>summarise" not in block
    assert block in session_html(s.transcript)
