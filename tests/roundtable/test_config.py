"""Session configs from Python and YAML: validation in one line, seats built from specs."""

from __future__ import annotations

import pytest

from argnb.errors import ArgnbError
from argnb.roundtable.config import SessionConfig
from argnb.roundtable.testing import table_backend


def test_yaml_config_builds_the_table(tmp_path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(
        "topic: Homework with AI tools?\nhuman: Ann\nturns: 5\nanalyze_every: 0\n"
        "deliberators:\n  - name: Lena\n    perspective: a cautious teacher\n  - {}\n"
        "fallacy_check: few\n"
    )
    c = SessionConfig.from_yaml(p)
    s = c.build(table_backend())
    assert s.names == ("Lena", "Deliberator 2", "Ann")
    assert [d.label for d in s.deliberators] == ["Deliberator 1", "Deliberator 2"]
    assert "a cautious teacher" in s.deliberators[0].task()
    assert s.fallacy.method == "few" and s.analyzer is not None
    assert s.transcript.meta["fallacy"]["method"] == "few"


def test_deliberators_as_a_comma_separated_string() -> None:
    c = SessionConfig(topic="Uniforms?", deliberators="local:smollm2-135m, ollama:llama3.2")
    assert [d.spec for d in c.deliberators] == ["local:smollm2-135m", "ollama:llama3.2"]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"topic": "no"}, "topic"),
        ({"topic": "Fine topic?", "turns": 0}, "turns"),
        ({"topic": "Fine topic?", "human_every": 1}, "human_every"),
        ({"topic": "Fine topic?", "colour": "red"}, "colour"),
        ({"topic": "Fine topic?", "deliberators": []}, "deliberators"),
    ],
)
def test_mistakes_name_the_field(data, message) -> None:
    with pytest.raises(ArgnbError, match=message):
        SessionConfig.parse(data)


def test_bad_yaml_files(tmp_path) -> None:
    with pytest.raises(ArgnbError, match="no session file"):
        SessionConfig.from_yaml(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("topic: [unclosed\n")
    with pytest.raises(ArgnbError, match="not valid YAML"):
        SessionConfig.from_yaml(bad)


def test_without_analyzer() -> None:
    s = SessionConfig(topic="Uniforms?", analysis=False).build(table_backend())
    assert s.analyzer is None
    s.run(["fine"] * 4)
    assert s.analyses == [] and s.ended is not None
    with pytest.raises(ArgnbError, match="no analyzer"):
        s.analyze()


def test_the_config_chooses_and_connects_no_backend_itself() -> None:
    """Defaults are chosen at entry points: build() takes the connected backends or refuses."""
    c = SessionConfig(
        topic="Uniforms?",
        deliberators="local:smollm2-135m, ollama:llama3.2, local:smollm2-135m",
        moderator="ollama:llama3.2",
        fallacy_check="few@openai:gpt-4o-mini",
    )
    assert c.specs() == ["local:smollm2-135m", "ollama:llama3.2", "openai:gpt-4o-mini"]
    assert not c.needs_backend()
    with pytest.raises(ArgnbError, match="no backend connected for"):
        c.build(None)
    b = table_backend()
    s = c.build(None, {spec: b for spec in c.specs()})
    assert s.fallacy.backend is b
    with pytest.raises(ArgnbError, match="no backend was given"):
        SessionConfig(topic="Uniforms?").build(None)
