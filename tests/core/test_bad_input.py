"""Data files a careless or hostile user hands us: a clean one-line error, never a traceback.

Loaders are property-tested with random bytes and random JSON: whatever the file holds, the
loader either returns items or raises an ArgnbError (which the CLI prints as one line, exit 2).
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argnb.cli import main
from argnb.errors import ArgnbError, DataError
from argnb.fallacy.data import detect_format, load_any

ITEM = {"id": "a", "source": "s", "text": "t", "label": 1}
OURS = json.dumps(ITEM) + "\n"


def cli_refuses(argv: list[str], capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_a_byte_order_mark_is_fine(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + OURS.encode())
    assert [it["id"] for it in load_any(p)] == ["a"]


def test_non_utf8_data_names_the_byte(tmp_path, capsys):
    p = tmp_path / "d.jsonl"
    p.write_bytes(OURS.replace("t", "caf\xe9").encode("latin-1"))
    err = cli_refuses(["fallacy", "bench", "--data", str(p), "--method", "zero"], capsys)
    assert "not UTF-8" in err and "0xe9" in err


def test_a_malformed_first_line_names_the_line(tmp_path, capsys):
    p = tmp_path / "d.jsonl"
    p.write_text("{oops\n" + OURS, encoding="utf-8")
    assert ":1: not JSON" in cli_refuses(
        ["fallacy", "bench", "--data", str(p), "--method", "zero"], capsys
    )


def test_a_folder_as_data_is_refused(tmp_path, capsys):
    err = cli_refuses(["fallacy", "bench", "--data", str(tmp_path), "--method", "zero"], capsys)
    assert "is a folder" in err


def test_a_json_list_of_our_items_is_our_format_not_cocolofa(tmp_path):
    p = tmp_path / "items.json"
    p.write_text(json.dumps([ITEM, {**ITEM, "id": "b", "label": 0}]), encoding="utf-8")
    assert detect_format(p) == "jsonl" and [it["label"] for it in load_any(p)] == [1, 0]


def test_a_format_mismatch_is_an_error_not_zero_labels(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(OURS, encoding="utf-8")
    with pytest.raises(DataError, match="not a MAFALDA record"):
        load_any(p, format="mafalda")
    with pytest.raises(DataError, match="not CoCoLoFa"):
        load_any(p, format="cocolofa")


def test_reports_refuse_files_that_are_not_results(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(OURS, encoding="utf-8")
    assert "not a fallacy result" in cli_refuses(["fallacy", "report", str(data)], capsys)
    err = cli_refuses(
        ["critique", "score", "--data", "assets/critique/examples.jsonl", "--pred", str(data)],
        capsys,
    )
    assert "not a judge's prediction" in err


def test_a_garbled_line_inside_a_results_file_is_an_error_not_a_skip(tmp_path):
    from argnb.batch import read_jsonl

    p = tmp_path / "r.jsonl"
    p.write_text('{"id": "a"}\nGARBAGE\n{"id": "b"}\n{"id": "c", "torn', encoding="utf-8")
    with pytest.raises(DataError, match=":2: not a JSON record"):
        read_jsonl(p)
    p.write_text('{"id": "a"}\n{"id": "c", "torn', encoding="utf-8")
    assert [r["id"] for r in read_jsonl(p)] == ["a"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".json", ".csv"]))
def test_random_bytes_load_or_fail_cleanly(tmp_path, data, suffix):
    p = tmp_path / f"d{suffix}"
    p.write_bytes(data)
    try:
        items = load_any(p)
    except ArgnbError:
        return
    assert items and all(it["label"] in (0, 1) for it in items)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    records=st.lists(JSON, min_size=1, max_size=4),
    fmt=st.sampled_from(["auto", "jsonl", "mafalda", "cocolofa"]),
)
def test_random_json_loads_or_fails_cleanly(tmp_path, records, fmt):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        items = load_any(p, format=fmt)
    except ArgnbError:
        return
    assert items and all(it["label"] in (0, 1) for it in items)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=st.lists(JSON, min_size=1, max_size=4))
def test_random_critique_files_load_or_fail_cleanly(tmp_path, records):
    from argnb.critique.data import load

    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with contextlib.suppress(ArgnbError):
        load(p)


# -- issue 21: the debate and roundtable commands -------------------------------------------------
DEBATE_ROWS = [
    {"debate_id": "d1", "topic": "Close the centre to cars", "turn": i, "stance": s, "text": t}
    for i, (s, t) in enumerate(
        [
            ("pro", "Fumes from cars harm the lungs of children who walk to school every day."),
            ("con", "Shops in the centre will close when their customers can no longer drive."),
            ("pro", "Oslo closed its centre to cars and its shops kept their customers and sales."),
        ]
    )
]


def _jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_21_1_next_with_an_unknown_debate_id_is_one_line(tmp_path, capsys):
    debates = _jsonl(tmp_path / "d.jsonl", DEBATE_ROWS)
    err = cli_refuses(
        [
            "debate",
            "next",
            "--debates",
            debates,
            "--cut",
            "1",
            "--debate",
            "nope",
            "--method",
            "llm",
        ],
        capsys,
    )
    assert "no debate 'nope'" in err


def test_21_1_a_non_utf8_human_script_is_one_line(tmp_path, capsys):
    p = tmp_path / "h.txt"
    p.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    err = cli_refuses(
        [
            "roundtable",
            "run",
            "--topic",
            "Tea or coffee?",
            "--human-script",
            str(p),
            "--backend",
            "local",
        ],
        capsys,
    )
    assert "not UTF-8" in err and "0xe9" in err


@pytest.mark.parametrize(
    ("content", "name", "fmt", "message"),
    [
        ("", "c.jsonl", "jsonl", "is empty"),
        ("\n  \n\n", "c.jsonl", "jsonl", "is empty"),
        ('{"debates": [{"topic": "T"}]}', "c.json", "jsonl", "the row has no 'topic'"),
        ('{"text": "no topic or stance here"}\n', "c.jsonl", "iq2", "the row has no 'debate_id'"),
        ("topic,stance,text\n", "c.csv", "csv", "holds no rows"),
        (json.dumps(DEBATE_ROWS[0]) + "\n", "c.jsonl", "csv", "but --from csv says CSV"),
        ("topic,stance,text\nT,pro,words\n", "c.csv", "iq2", "but --from iq2 says JSON Lines"),
        (
            "".join(json.dumps({**r, "stance": "moderator"}) + "\n" for r in DEBATE_ROWS),
            "c.jsonl",
            "iq2",
            "gives no records (skipped: 3 moderator-stance turns)",
        ),
    ],
)
def test_21_2_memory_build_refuses_input_that_adds_nothing(
    tmp_path, capsys, content, name, fmt, message
):
    corpus = tmp_path / name
    corpus.write_text(content, encoding="utf-8")
    db = tmp_path / "m.db"
    err = cli_refuses(
        ["debate", "memory", "build", "--from", fmt, str(corpus), "--db", str(db)], capsys
    )
    assert message in err
    assert not db.exists()  # nothing written, nothing reported as built


def test_21_2_memory_build_refuses_an_unknown_debate_id(tmp_path, capsys):
    corpus = _jsonl(tmp_path / "c.jsonl", DEBATE_ROWS)
    db = tmp_path / "m.db"
    argv = ["debate", "memory", "build", "--from", "iq2", corpus, "--db", str(db)]
    assert "no debate 'd9'" in cli_refuses([*argv, "--debate", "d9"], capsys)
    assert main([*argv, "--debate", "d1", "--min-words", "3", "--json", "--quiet"]) == 0
    built = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert built["added"] == 3 and built["by_source"] == {"iq2": 3}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"say": "hello"}', "holds a JSON dict"),
        ('["fine", {"say": "hello"}]', "holds a JSON list of other things than texts"),
        ("[1, 2", "starts like JSON but is not valid JSON"),
    ],
)
def test_21_6_a_human_script_must_be_texts(tmp_path, capsys, content, message):
    p = tmp_path / "h.json"
    p.write_text(content, encoding="utf-8")
    err = cli_refuses(
        [
            "roundtable",
            "run",
            "--topic",
            "Tea or coffee?",
            "--human-script",
            str(p),
            "--backend",
            "local",
        ],
        capsys,
    )
    assert message in err


def test_21_6_a_human_script_of_texts_or_lines_is_read(tmp_path):
    from argnb.datafiles import script_lines

    p = tmp_path / "h.json"
    p.write_text('["I think so.", "/end"]', encoding="utf-8")
    assert script_lines(p) == ["I think so.", "/end"]
    p.write_text("\ufeffFirst.\n\n/pass\n", encoding="utf-8")
    assert script_lines(p) == ["First.", "/pass"]


TABLE = st.one_of(
    st.binary(max_size=200),
    st.lists(JSON, max_size=4).map(lambda rs: "".join(json.dumps(r) + "\n" for r in rs).encode()),
    st.lists(st.lists(st.text(max_size=6), max_size=4), max_size=4).map(
        lambda rows: "\n".join(",".join(c) for c in rows).encode()
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=TABLE,
    suffix=st.sampled_from([".jsonl", ".json", ".csv", ".txt"]),
    kind=st.sampled_from([None, "jsonl", "csv"]),
)
def test_random_tables_read_or_fail_cleanly(tmp_path, data, suffix, kind):
    from argnb.datafiles import table_rows

    p = tmp_path / f"t{suffix}"
    p.write_bytes(data)
    try:
        rows = table_rows(p, kind=kind, required=("text",))
    except ArgnbError:
        return
    assert rows and all(isinstance(r, dict) and r.get("text") is not None for r in rows)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())))
def test_random_human_scripts_read_or_fail_cleanly(tmp_path, data):
    from argnb.datafiles import script_lines

    p = tmp_path / "h.txt"
    p.write_bytes(data)
    try:
        lines = script_lines(p)
    except ArgnbError:
        return
    assert all(isinstance(x, str) for x in lines)


# -- found by the fuzzer (tests/core/test_cli_fuzz.py) ---------------------------------------------
def test_fuzz_found_non_utf8_schemes_and_history_files_are_one_line(tmp_path, capsys):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9\n".encode("latin-1"))
    assert "not UTF-8" in cli_refuses(["debate", "schemes", "--file", str(bad)], capsys)
    db = str(tmp_path / "m.db")
    assert main(["debate", "memory", "build", "--from", "example", "--db", db, "--quiet"]) == 0
    err = cli_refuses(["debate", "retrieve", "--db", db, "--history", str(bad)], capsys)
    assert "not UTF-8" in err
    err = cli_refuses(["roundtable", "run", "--config", str(bad)], capsys)
    assert "not UTF-8" in err


def test_fuzz_found_embed_with_no_cache_runs(tmp_path, capsys, monkeypatch):
    import argnb.config
    from argnb.llm import ScriptedBackend

    monkeypatch.setattr(
        argnb.config, "connect", lambda *a, **kw: ScriptedBackend(["unused"], model="emb")
    )
    db = str(tmp_path / "m.db")
    assert main(["debate", "memory", "build", "--from", "example", "--db", db, "--quiet"]) == 0
    argv = ["debate", "memory", "embed", "--db", db, "--embedder", "ollama:emb", "--no-cache"]
    assert main([*argv, "--quiet"]) == 0  # before: TypeError, cache given twice


@pytest.mark.parametrize("delay", ["-1", "nan", "inf"])
def test_fuzz_found_a_replay_delay_must_be_seconds(tmp_path, capsys, delay):
    with pytest.raises(SystemExit) as exc:
        main(["roundtable", "replay", str(tmp_path / "s.json"), "--delay", delay])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--delay" in err and len(err.strip().splitlines()) == 1
