from argnb.llm import Usage
from argnb.transcript import Transcript


def _tr():
    tr = Transcript(kind="deliberation", title="t <b>")
    tr.add(
        speaker="A",
        role="propose",
        text="<img src=x onerror=alert(1)>",
        round=1,
        payload={"vote": 1, "confidence": 0.8},
        usage=Usage(prompt_tokens=3, completion_tokens=2),
        backend="scripted",
    )
    tr.add(speaker="B", role="counter", text="no", round=1, payload={"vote": 0}, valid=False)
    tr.outcome = {"label": 1, "how": "<script>x</script>"}
    return tr


def test_json_round_trip(tmp_path):
    tr = _tr()
    back = Transcript.load(tr.save(tmp_path / "t.json"))
    assert back == tr and back.usage.total_tokens == 5 and back.calls == 1


def test_html_escapes_untrusted_text():
    html = _tr()._repr_html_()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>" not in html and "<b>" not in html.split("</h4>")[0].split(": ", 1)[1]


def test_dataframe_has_one_row_per_turn_and_payload_columns():
    df = _tr().to_dataframe()
    assert list(df["speaker"]) == ["A", "B"]
    assert df.loc[0, "payload.vote"] == 1 and df.loc[1, "valid"] == False  # noqa: E712
