"""One reader for the YAML files a learner writes (a roundtable session, a dialogue's stances):
``argnb.datafiles.yaml_document``. Every mistake is one line, a ``DataError`` (exit 2)."""

from __future__ import annotations

import pytest

from argnb.datafiles import yaml_document
from argnb.dialectic.case import Case
from argnb.dialectic.examples import example_path
from argnb.errors import DataError
from argnb.roundtable.config import SessionConfig


def one_line(exc: pytest.ExceptionInfo) -> str:
    assert "\n" not in exc.value.message
    return exc.value.message


def test_plain_data_from_utf8_with_or_without_a_bom_and_an_empty_file_is_empty(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_bytes("\ufefftopic: Caf\u00e9s?\n".encode())
    assert yaml_document(p) == {"topic": "Caf\u00e9s?"}
    p.write_text("")
    assert yaml_document(p) == {}


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no session file at"),
        ("dir", "is a folder"),
        (b"topic: caf\xe9\n", "is not UTF-8 text"),
        (b"topic: [unclosed\n", "is not valid YAML"),
        (b"topic: !!python/object/apply:os.system [ls]\n", "is not valid YAML"),
    ],
)
def test_every_mistake_is_one_line(tmp_path, content, message):
    p = tmp_path / "s.yaml"
    if content == "dir":
        p.mkdir()
    elif content is not None:
        p.write_bytes(content)
    with pytest.raises(DataError) as exc:
        yaml_document(p, what="session file")
    assert message in one_line(exc)


def test_both_modules_read_through_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("topic: [unclosed\n")
    for load in (SessionConfig.from_yaml, Case.load):
        with pytest.raises(DataError) as exc:
            load(bad)
        assert one_line(exc).startswith(f"{bad} is not valid YAML")
    assert Case.load(example_path("camera")).agents[0].name == "AG1"
    bad.write_text("issue: x\nagents: [{name: A, facts: [f]}]\n")
    with pytest.raises(DataError) as exc:
        Case.load(bad)
    assert one_line(exc).startswith(f"{bad}: not a valid stances file: agents:")
