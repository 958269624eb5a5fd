"""Dataset loaders on fixtures we wrote in the original formats, and the download path."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from argnb.errors import ArgnbError
from argnb.fallacy import data

FIX = Path(__file__).with_name("fixtures")


def test_logic_csv_all_fallacious_skips_empty_rows_keeps_newlines():
    items = data.load_logic(FIX / "edu_test.csv", split="test")
    assert [it["id"] for it in items] == ["logic-test-0", "logic-test-1", "logic-test-3"]
    assert {it["label"] for it in items} == {1}
    assert items[1]["fallacy_type"] == "slippery slope"
    assert "\n" in items[1]["text"]
    assert items[2]["text"] == 'She said "trust me", so I trusted her.'


def test_logicclimate_csv_uses_the_logical_fallacies_column():
    items = data.load_logicclimate(FIX / "climate_test.csv")
    assert len(items) == 2
    assert [it["fallacy_type"] for it in items] == [
        "faulty generalization",
        "fallacy of credibility",
    ]
    assert all(it["source"] == "logicclimate" and it["label"] == 1 for it in items)


def test_mafalda_label_zero_when_no_span_names_a_fallacy():
    items = data.load_mafalda(FIX / "gold_standard_dataset.jsonl")
    assert [it["label"] for it in items] == [1, 0, 1, 0]
    assert items[2]["fallacy_type"] == "ad hominem; circular reasoning"
    assert items[3]["fallacy_type"] is None
    assert not items[0]["text"].endswith("\n")


def test_cocolofa_flattens_comments_and_maps_none_to_zero():
    items = data.load_cocolofa(FIX / "test.json", split="test")
    assert [(it["id"], it["label"]) for it in items] == [
        ("cocolofa-test-11", 1),
        ("cocolofa-test-12", 0),
        ("cocolofa-test-21", 1),
    ]
    assert items[1]["fallacy_type"] is None and items[2]["fallacy_type"] == "false dilemma"


def test_our_jsonl_round_trip_and_errors(tmp_path):
    items = data.load_jsonl(FIX / "ours.jsonl")
    assert [it["label"] for it in items] == [1, 0]
    out = data.save_jsonl(items, tmp_path / "x.jsonl")
    assert data.load_jsonl(out) == items
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "source": "s", "text": "t", "label": 2}\n')
    with pytest.raises(ArgnbError, match="label must be 0 or 1"):
        data.load_jsonl(bad)
    dup = tmp_path / "dup.jsonl"
    line = json.dumps({"id": "a", "source": "s", "text": "t", "label": 1})
    dup.write_text(line + "\n" + line + "\n")
    with pytest.raises(ArgnbError, match="duplicate id"):
        data.load_jsonl(dup)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "text": "t"}\n')
    with pytest.raises(ArgnbError, match=r"broken.jsonl:1"):
        data.load_jsonl(broken)
    with pytest.raises(ArgnbError, match="no data file"):
        data.load_jsonl(tmp_path / "missing.jsonl")


def test_detect_format_and_load_any():
    assert data.detect_format(FIX / "edu_test.csv") == "logic"
    assert data.detect_format(FIX / "climate_test.csv") == "logicclimate"
    assert data.detect_format(FIX / "gold_standard_dataset.jsonl") == "mafalda"
    assert data.detect_format(FIX / "test.json") == "cocolofa"
    assert data.detect_format(FIX / "ours.jsonl") == "jsonl"
    assert len(data.load_any(FIX / "test.json")) == 3
    assert len(data.load_any(FIX / "gold_standard_dataset.jsonl")) == 4


def test_fetch_downloads_once_into_the_cache(tmp_path, monkeypatch):
    opened = []

    def fake_urlopen(url, timeout):
        opened.append(url)
        return io.BytesIO((FIX / "test.json").read_bytes())

    monkeypatch.setattr(data, "urlopen", fake_urlopen)
    items = data.load_cocolofa(split="test", cache=tmp_path)
    assert opened == ["https://raw.githubusercontent.com/Crowd-AI-Lab/cocolofa/main/test.json"]
    assert len(items) == 3
    assert (tmp_path / "cocolofa" / "test.json").exists()
    data.load_cocolofa(split="test", cache=tmp_path)
    assert len(opened) == 1, "the second load must come from the cache"


def test_fetch_uses_the_original_urls(tmp_path, monkeypatch):
    seen = []
    by_url_part = {
        "edu_test.csv": "edu_test.csv",
        "climate_test.csv": "climate_test.csv",
        "gold_standard_dataset.jsonl": "gold_standard_dataset.jsonl",
    }

    def fake_urlopen(url, timeout):
        seen.append(url)
        return io.BytesIO((FIX / by_url_part[url.rsplit("/", 1)[-1]]).read_bytes())

    monkeypatch.setattr(data, "urlopen", fake_urlopen)
    assert len(data.load("logic", split="test", cache=tmp_path)) == 3
    assert len(data.load("logicclimate", split="test", cache=tmp_path)) == 2
    assert len(data.load("mafalda", cache=tmp_path)) == 4
    assert seen == [
        "https://raw.githubusercontent.com/causalNLP/logical-fallacy/main/data/edu_test.csv",
        "https://raw.githubusercontent.com/causalNLP/logical-fallacy/main/data/climate_test.csv",
        "https://raw.githubusercontent.com/ChadiHelwe/MAFALDA/main/datasets/gold_standard_dataset.jsonl",
    ]


def test_fetch_from_a_file_url_and_failure_leaves_nothing(tmp_path):
    local = tmp_path / "mirror" / "test.json"
    local.parent.mkdir()
    shutil.copy(FIX / "test.json", local)
    p = data.fetch("cocolofa", "test", cache=tmp_path / "c", url=local.as_uri())
    assert p.read_bytes() == local.read_bytes()
    with pytest.raises(ArgnbError, match="could not download"):
        data.fetch("cocolofa", "dev", cache=tmp_path / "c", url=(tmp_path / "nope.json").as_uri())
    assert not list((tmp_path / "c" / "cocolofa").glob("*.part"))
    assert not (tmp_path / "c" / "cocolofa" / "nope.json").exists()


def test_unknown_names_are_clear_errors():
    with pytest.raises(ArgnbError, match="unknown dataset"):
        data.load("elecdeb")
    with pytest.raises(ArgnbError, match="unknown dataset"):
        data.fetch("rufal")


def test_sample_is_reproducible_and_spread_over_sources():
    items = [{"id": f"{s}{i}", "source": s} for s in "abc" for i in range(10)]
    one = data.sample(items, 6, seed=1)
    assert one == data.sample(items, 6, seed=1)
    assert sorted(it["source"] for it in one) == ["a", "a", "b", "b", "c", "c"]
    assert len(data.sample(items, 100)) == 30


@pytest.mark.data
def test_the_shared_dev_benchmark_loads(shared_data):
    path = shared_data / "fallacy-bench" / "dev.jsonl"
    if not path.exists():
        pytest.skip("fallacy-bench/dev.jsonl is not present")
    items = data.load_any(path)
    assert len(items) == 397
    assert {it["source"] for it in items} == {"cocolofa", "logic", "logicclimate", "mafalda"}
    assert sum(it["label"] for it in items) in (198, 199)


def test_cli_fetch_from_a_mirror_writes_our_format(tmp_path, capsys):
    from argnb.cli import main

    out = tmp_path / "coco.jsonl"
    url = (FIX / "test.json").as_uri()
    assert main(["fallacy", "fetch", "cocolofa", "--url", url, "--out", str(out)]) == 0
    assert "3 items written" in capsys.readouterr().out
    assert [it["label"] for it in data.load_jsonl(out)] == [1, 0, 1]
