from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from argnb.debate.agreement import read_annotations
from argnb.debate.memory import Record, Store
from argnb.errors import ArgnbError
from argnb.transcript import Turn

from .conftest import rec


def test_adding_is_idempotent_and_ids_are_stable(tmp_path):
    db = tmp_path / "m.db"
    with Store(db) as s:
        assert s.add([rec("d", 0, "pro", "First."), rec("d", 1, "con", "Second.")]).added == 2
        again = s.add([rec("d", 0, "pro", "First."), rec("d", 2, "pro", "Third.")])
        assert (again.added, again.existing) == (1, 1)
    with Store(db) as s:  # reopened from disk
        assert [r.id for r in s.records()] == ["t/d/0.0", "t/d/1.0", "t/d/2.0"]
        assert s.has_debate("t", "d") and not s.has_debate("t", "x")


def test_records_validate_stance():
    with pytest.raises(ValueError):
        Record(source="s", debate_id="d", topic="t", stance="moderator", text="x")


def test_annotations_replace_and_record_who_made_them(tiny):
    turn = Turn(speaker="scheme annotator", role="scheme annotation", calls=1, model="m")
    tiny.annotate("t/school/1.0", {"example": None}, backend="scripted", model="m", turns=[turn])
    a = tiny.annotations()["t/school/1.0"]
    assert a.labels == {"example": None} and a.annotator == "scripted:m"
    assert tiny.turns("t/school/1.0")[0].calls == 1
    info = tiny.info()
    assert info.by_label["unscored"] == 1
    assert info.annotators == {"human:tests": 5, "scripted:m": 1}
    df = info.to_frame()
    assert df[df.what == "label"].set_index("key")["count"]["unscored"] == 1
    with pytest.raises(ArgnbError, match="no record"):
        tiny.annotate("nope", {}, backend="b", model="m")


def test_unannotated_and_clear(tiny):
    assert tiny.unannotated() == []
    tiny.add([rec("cars", 9, "pro", "New one.")])
    assert [r.id for r in tiny.unannotated()] == ["t/cars/9.0"]
    assert tiny.clear_annotations(model="tests") == 6
    assert len(tiny.unannotated()) == 7


def test_embeddings_are_normalised_per_model_and_dimensions_are_checked(tiny):
    ids = [r.id for r in tiny.records()]
    tiny.put_embeddings("m1", ids[:2], np.array([[3.0, 4.0], [0.0, 2.0]]))
    got_ids, mat = tiny.embeddings("m1")
    assert got_ids == ids[:2]
    np.testing.assert_allclose(mat, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)
    assert [r.id for r in tiny.unembedded("m1")] == ids[2:]
    with pytest.raises(ArgnbError, match="dimensions"):
        tiny.put_embeddings("m1", ids[2:3], np.ones((1, 3)))
    with pytest.raises(ArgnbError, match="no embeddings by"):
        tiny.embeddings("other")
    assert tiny.info().embeddings == {"m1": 2}


def test_every_write_bumps_the_generation(tiny):
    g = tiny.generation
    tiny.add([rec("x", 0, "pro", "A.")])
    tiny.annotate("t/x/0.0", {}, backend="b", model="m")
    assert tiny.generation == g + 2


def test_removing_a_debate_cascades(tiny):
    tiny.put_embeddings("m", ["t/cars/0.0"], np.ones((1, 2)))
    assert tiny.remove_debate("t", "cars") == 4
    assert tiny.count() == 2 and "t/cars/0.0" not in tiny.annotations()
    assert tiny.embedding_models() == {"m": 0}


def test_not_a_memory_and_a_directory_are_clear_errors(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ArgnbError, match="not a debate memory"):
        Store(bad)
    with pytest.raises(ArgnbError, match="directory"):
        Store(tmp_path)
    other = tmp_path / "v.db"
    Store(other).close()
    with sqlite3.connect(other) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'format_version'")
    with pytest.raises(ArgnbError, match="format 99"):
        Store(other)


def test_export_reads_back_as_an_annotation_file(tiny, tmp_path):
    out = tmp_path / "a.jsonl"
    assert tiny.export_annotations(out) == 6
    back = read_annotations(out)
    assert back.labels["t/cars/3.0"] == {"cause_to_effect": "poor"}
    assert back.annotators == ("human:tests",)


def test_frame_has_one_row_per_record(tiny):
    df = tiny.to_frame()
    assert len(df) == 6 and df.loc[0, "schemes"]["positive_consequences"] == "excellent"
