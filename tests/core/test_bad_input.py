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
