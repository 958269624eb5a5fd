"""Every export reads back: random maps, arbitrary unicode in every text field.

Argdown is parsed by the reference parser ``@argdown/cli`` (all maps of a run in one invocation:
node starts slowly), GraphML by networkx, AIF by our reader. Texts come back as
``argnb.maps.clean`` documents them (Argdown: on one line). Each test prints how many maps and
random strings it ran (``pytest -s``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings

from argnb.maps import ArgumentMap, clean_text, from_aif, validate_aif
from argnb.maps.argdown import tag, titles
from argnb.maps.clean import FORBIDDEN, one_line

from .strategies import maps, text_fields

EXAMPLES = int(os.environ.get("ARGNB_ROUNDTRIP_EXAMPLES", "100"))
quick = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _argdown_cli() -> str | None:
    return os.environ.get("ARGDOWN_CLI") or shutil.which("argdown")


def _report(name: str, n_maps: int, n_strings: int, start: float) -> None:
    took = time.perf_counter() - start
    print(f"\n{name}: {n_maps} random maps, {n_strings} random strings, {took:.1f} s")


def _edges(m: ArgumentMap) -> Counter:
    return Counter((u, v, d["kind"]) for u, v, d in m.graph.edges(data=True))


def test_graphml_round_trip_keeps_every_text():
    start, seen = time.perf_counter(), [0, 0]

    @quick
    @given(maps())
    def check(m: ArgumentMap) -> None:
        seen[0] += 1
        seen[1] += text_fields(m)
        text = m.to_graphml()
        g = nx.read_graphml(io.BytesIO(text.encode("utf-8")), force_multigraph=True)
        assert set(g.nodes) == set(m.graph.nodes)
        assert g.graph.get("title", "") == clean_text(m.title)
        for n, d in m.graph.nodes(data=True):
            back = g.nodes[n]
            for key in ("kind", "text", "agent", "status", "move"):
                want = "" if d.get(key) is None else clean_text(d[key])
                assert back.get(key, "") == want, (n, key)
        assert Counter((u, v, d["kind"]) for u, v, d in g.edges(data=True)) == _edges(m)

    check()
    _report("GraphML", *seen, start)


def test_aif_round_trip_keeps_every_text_and_speaker():
    start, seen = time.perf_counter(), [0, 0]

    @quick
    @given(maps())
    def check(m: ArgumentMap) -> None:
        seen[0] += 1
        seen[1] += text_fields(m)
        raw = json.dumps(m.to_aif(), ensure_ascii=False).encode("utf-8")  # a real UTF-8 file
        back = from_aif(validate_aif(json.loads(raw.decode("utf-8"))))
        statements = [n for n in m.nodes() if m.node(n)["kind"] != "argument"]
        assert sorted(back.node(n)["text"] for n in back.nodes() if n.startswith("I")) == sorted(
            clean_text(m.node(n)["text"]) for n in statements
        )
        assert [(mv["speaker"], mv["text"]) for mv in back.moves.values()] == [
            (clean_text(mv["speaker"]), clean_text(mv["text"])) for mv in m.moves.values()
        ]
        # AIF has no inference without premises (documented): it becomes its conclusion, and an
        # undercut of it a conflict with that conclusion
        bare = {a for a in m.nodes("argument") if m.graph.in_degree(a) == _undercuts_of(m, a)}
        on_bare = sum(1 for _, v, _ in m.edges("undercut") if v in bare)
        counts = Counter(d["kind"] for _, _, d in back.edges())
        assert counts["rebut"] == len(m.edges("rebut")) + on_bare
        assert counts["undercut"] == len(m.edges("undercut")) - on_bare
        assert len(back.nodes("argument")) == len(m.nodes("argument")) - len(bare) + len(
            m.edges("support")
        )

    check()
    _report("AIF", *seen, start)


def _undercuts_of(m: ArgumentMap, a: str) -> int:
    return sum(1 for _, v, _ in m.edges("undercut") if v == a)


@pytest.mark.skipif(
    _argdown_cli() is None, reason="@argdown/cli is not installed (set ARGDOWN_CLI)"
)
def test_argdown_round_trip_through_the_reference_parser(tmp_path: Path):
    start, cases = time.perf_counter(), []

    @settings(quick, max_examples=3 * EXAMPLES)  # one parser run for all: cheap per map
    @given(maps())
    def collect(m: ArgumentMap) -> None:
        cases.append(m)

    collect()
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for i, m in enumerate(cases):
        (src / f"m{i}.argdown").write_text(m.to_argdown(), encoding="utf-8")
    run = subprocess.run(
        [_argdown_cli(), "json", f"{src}/*.argdown", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    for i, m in enumerate(cases):
        path = out / f"m{i}.json"
        if not path.exists():  # show the parser's own message for this one file
            alone = subprocess.run(
                [_argdown_cli(), "json", str(src / f"m{i}.argdown"), "--stdout"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            pytest.fail(f"{m.to_argdown()}\n---\n{alone.stdout[-3000:]}{run.stderr[-500:]}")
        _check_argdown(m, json.loads(path.read_text(encoding="utf-8")))
    _report("Argdown", len(cases), sum(map(text_fields, cases)), start)


def _defined_text(members: list[dict], tags: list) -> str:
    """The text of the defining member; a bare ``[t]`` above relation lines reads as " "."""
    text = next((x.get("text") or "" for x in members if not x.get("isReference")), "")
    return text if tags else text.strip()


def _check_argdown(m: ArgumentMap, data: dict) -> None:
    source = m.to_argdown()
    name = titles(list(m.graph.nodes))

    def expected(text: str, *tags: str | None) -> str:
        return " ".join(x for x in (one_line(text), *tags) if x)

    for n, d in m.graph.nodes(data=True):
        tags = [tag(x) for x in (d.get("agent"), d.get("status")) if x]
        if d["kind"] == "assumption":
            tags.append("#(assumption)")
        if d["kind"] == "argument":
            arg = data["arguments"][name[n]]
            desc = _defined_text(arg["members"], tags)
            want = expected(d.get("text") or d.get("label") or n, *tags)
            assert desc == want, (n, source)
        else:
            members = data["statements"][name[n]]["members"]
            got = _defined_text(members, tags)
            assert got == expected(d["text"], *tags), (n, source)
    assert set(data["statements"]) == {
        name[n] for n in m.nodes() if m.node(n)["kind"] != "argument"
    }
    assert set(data["arguments"]) == {name[n] for n in m.nodes("argument")}
    kind = {"rebut": "attack", "support": "support", "undercut": "undercut"}
    want = {(name[u], kind[d["kind"]], name[v]) for u, v, d in m.edges() if d["kind"] in kind}
    got = {(r["from"], r["relationType"], r["to"]) for r in data["relations"]}
    assert want <= got, (want - got, source)
    if one_line(m.title):
        assert data["sections"][0]["title"] == one_line(m.title), source


def test_views_write_utf8_and_plain_text_is_clean():
    """The HTML page and the notebook bundle encode as UTF-8 whatever the model wrote."""
    seen = [0, 0]

    @settings(quick, max_examples=max(10, EXAMPLES // 10))
    @given(maps(max_statements=3))
    def check(m: ArgumentMap) -> None:
        seen[0] += 1
        seen[1] += text_fields(m)
        m.to_html(resources="remote").encode("utf-8")
        plain = m.to_text()
        plain.encode("utf-8")
        assert not FORBIDDEN.search(plain)

    check()
