"""Loaders for fallacy datasets, in their original formats and in ours.

Our format is JSON Lines, one item per line::

    {"id": "...", "source": "cocolofa", "text": "...", "label": 1, "fallacy_type": "slippery slope", "split": "dev"}

with ``label`` 1 = fallacious, 0 = not. The public datasets are read from a local path or, when
online, downloaded once from their original GitHub location into a cache directory:

========================  =========================================================  ============
loader                    original file                                              labels
========================  =========================================================  ============
``load_logic``            causalNLP/logical-fallacy ``data/edu_{split}.csv``          all 1
``load_logicclimate``     causalNLP/logical-fallacy ``data/climate_{split}.csv``      all 1
``load_mafalda``          ChadiHelwe/MAFALDA ``datasets/gold_standard_dataset.jsonl``  0 when no fallacy
``load_cocolofa``         Crowd-AI-Lab/cocolofa ``{split}.json``                      0 when "none"
========================  =========================================================  ============

None of these datasets may be redistributed with argnb; tests use fixtures we wrote ourselves.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from argnb.datafiles import existing_file, json_document, json_lines, read_text
from argnb.errors import ArgnbError, DataError

RAW = "https://raw.githubusercontent.com"
URLS: dict[str, str] = {
    "logic": RAW + "/causalNLP/logical-fallacy/main/data/edu_{split}.csv",
    "logicclimate": RAW + "/causalNLP/logical-fallacy/main/data/climate_{split}.csv",
    "mafalda": RAW + "/ChadiHelwe/MAFALDA/main/datasets/gold_standard_dataset.jsonl",
    "cocolofa": RAW + "/Crowd-AI-Lab/cocolofa/main/{split}.json",
}
SOURCES = tuple(URLS)
#: the label columns the LOGIC CSVs have used over the repository's history
_LOGIC_LABEL_COLUMNS = ("logical_fallacies", "updated_label", "new_label_2", "label")
_NO_FALLACY = {"", "none", "nothing", "no fallacy", "non-fallacious"}

#: the function used to open URLs (tests replace it)
urlopen: Callable[..., Any] = urllib.request.urlopen


class Item(BaseModel):
    """One benchmark item in our format."""

    id: str
    source: str
    text: str
    label: int
    fallacy_type: str | None = None
    split: str = ""


def _item(**kw: Any) -> dict[str, Any]:
    return Item(**kw).model_dump()


# -- our format ----------------------------------------------------------------------------
def _ours(p: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """Records of our format: JSON Lines, or a JSON list of the same objects (``.json``)."""
    if p.suffix.lower() != ".json":
        yield from json_lines(p)
        return
    data = json_document(p)
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(
            f"{p}: expected a list of items", hint="or pass --format for the file's real format"
        )
    yield from enumerate(data, start=1)


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Items in our format; a bad line is an error that names the line."""
    p = Path(path)
    items, seen = [], set()
    for n, raw in _ours(p):
        try:
            raw["id"] = str(raw["id"]) if "id" in raw else f"{p.stem}-{n}"
            item = Item.model_validate(raw)
        except (ValidationError, TypeError) as exc:
            raise ArgnbError(
                f"{p}:{n}: not a fallacy item ({str(exc).splitlines()[0]})",
                hint='each line needs {"id","source","text","label"} with label 0 or 1',
            ) from None
        if item.label not in (0, 1):
            raise ArgnbError(f"{p}:{n}: label must be 0 or 1, got {item.label}")
        if item.id in seen:
            raise ArgnbError(f"{p}:{n}: duplicate id {item.id!r}", hint="ids must be unique")
        seen.add(item.id)
        items.append(item.model_dump())
    return _some(items, p, "jsonl")


def save_jsonl(items: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write items in our format (validated)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps(Item(**it).model_dump(), ensure_ascii=False) + "\n")
    return p


# -- original formats ----------------------------------------------------------------------
def _some(items: list[dict[str, Any]], path: Path, fmt: str) -> list[dict[str, Any]]:
    """Zero items is never a dataset: say so instead of reporting on nothing."""
    if not items:
        raise DataError(
            f"{path} holds no {fmt} items",
            hint="check the file, or pass --format for its real format (auto, jsonl, "
            + ", ".join(SOURCES)
            + ")",
        )
    return items


def _logic_csv(path: Path, source: str, split: str) -> list[dict[str, Any]]:
    import io

    rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
    if not rows:
        return _some([], path, source)
    cols = rows[0].keys()
    text_col = "source_article" if "source_article" in cols else "text"
    label_col = next((c for c in _LOGIC_LABEL_COLUMNS if c in cols), None)
    if text_col not in cols or label_col is None:
        raise ArgnbError(
            f"{path}: not a LOGIC/LOGICCLIMATE CSV (columns: {', '.join(map(str, cols))})",
            hint="expected a source_article column and a label column such as logical_fallacies",
        )
    out = []
    for i, row in enumerate(rows):
        text = (row.get(text_col) or "").strip()
        if not text:
            continue  # a few rows of the climate files have no text
        kind = (row.get(label_col) or "").strip()
        out.append(
            _item(
                id=f"{source}-{split or 'all'}-{i}",
                source=source,
                text=text,
                label=0 if kind.lower() in _NO_FALLACY else 1,
                fallacy_type=kind or None,
                split=split,
            )
        )
    return _some(out, path, source)


def load_logic(path: str | Path | None = None, *, split: str = "test", **kw: Any) -> list[dict]:
    """LOGIC (educational fallacy examples; every item is fallacious)."""
    p = Path(path) if path else fetch("logic", split, **kw)
    return _logic_csv(p, "logic", split)


def load_logicclimate(
    path: str | Path | None = None, *, split: str = "test", **kw: Any
) -> list[dict]:
    """LOGICCLIMATE (sentences from climate-change news; every item is fallacious)."""
    p = Path(path) if path else fetch("logicclimate", split, **kw)
    return _logic_csv(p, "logicclimate", split)


def load_mafalda(path: str | Path | None = None, **kw: Any) -> list[dict]:
    """MAFALDA's gold standard: a text is fallacious when any span carries a fallacy label."""
    p = Path(path) if path else fetch("mafalda", "test", **kw)
    out = []
    for i, (n, rec) in enumerate(json_lines(p)):
        if "labels" not in rec or "text" not in rec:
            raise DataError(
                f"{p}:{n}: not a MAFALDA record (it needs 'text' and 'labels')",
                hint="pass the right --format (our items are --format jsonl)",
            )
        kinds = sorted(
            {
                str(span[2]).strip()
                for span in rec.get("labels") or []
                if len(span) >= 3 and str(span[2]).strip().lower() not in _NO_FALLACY
            }
        )
        out.append(
            _item(
                id=f"mafalda-{i}",
                source="mafalda",
                text=str(rec["text"]).strip(),
                label=1 if kinds else 0,
                fallacy_type="; ".join(kinds) or None,
                split="test",
            )
        )
    return _some(out, p, "mafalda")


def load_cocolofa(path: str | Path | None = None, *, split: str = "test", **kw: Any) -> list[dict]:
    """CoCoLoFa: news comments written to contain one fallacy type, or none."""
    p = Path(path) if path else fetch("cocolofa", split, **kw)
    articles = json_document(p)
    if not isinstance(articles, list) or not all(
        isinstance(a, dict) and "comments" in a for a in articles
    ):
        raise DataError(
            f"{p}: not CoCoLoFa data (a list of articles with 'comments')",
            hint="pass the right --format (a JSON list of our items is --format jsonl)",
        )
    out = []
    for art in articles:
        for c in art.get("comments") or []:
            kind = str(c.get("fallacy") or "none").strip()
            text = str(c.get("comment") or "").strip()
            if not text:
                continue
            fallacious = kind.lower() not in _NO_FALLACY
            out.append(
                _item(
                    id=f"cocolofa-{split}-{c['id']}",
                    source="cocolofa",
                    text=text,
                    label=1 if fallacious else 0,
                    fallacy_type=kind if fallacious else None,
                    split=split,
                )
            )
    return _some(out, p, "cocolofa")


LOADERS: dict[str, Callable[..., list[dict]]] = {
    "logic": load_logic,
    "logicclimate": load_logicclimate,
    "mafalda": load_mafalda,
    "cocolofa": load_cocolofa,
}


def load(source: str, *, split: str = "test", path: str | Path | None = None, **kw: Any) -> list:
    """Load a public dataset by name (``logic``, ``logicclimate``, ``mafalda``, ``cocolofa``)."""
    if source not in LOADERS:
        raise ArgnbError(f"unknown dataset {source!r}", hint=f"use one of {', '.join(SOURCES)}")
    if source == "mafalda":
        return load_mafalda(path, **kw)
    return LOADERS[source](path, split=split, **kw)


def detect_format(path: str | Path) -> str:
    """Guess a file's format from its name and first record: ours, or one of the originals."""
    p = existing_file(path)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        header = next(csv.reader(read_text(p).splitlines()[:1]), [])
        return "logicclimate" if "original_url" in header else "logic"
    if suffix == ".json":
        data = json_document(p)
        first = data[0] if isinstance(data, list) and data else {}
        return "cocolofa" if isinstance(first, dict) and "comments" in first else "jsonl"
    for _, rec in json_lines(p):
        return "mafalda" if "labels" in rec and "label" not in rec else "jsonl"
    return "jsonl"


def load_any(path: str | Path, *, format: str = "auto", split: str = "test") -> list[dict]:
    """Load a file in our format or an original one (``format="auto"`` detects which)."""
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "jsonl":
        return load_jsonl(path)
    if fmt == "mafalda":
        return load_mafalda(path)
    if fmt not in LOADERS:
        raise ArgnbError(f"unknown format {fmt!r}", hint="use auto, jsonl or " + ", ".join(SOURCES))
    return LOADERS[fmt](path, split=split)


# -- downloads -----------------------------------------------------------------------------
def cache_dir() -> Path:
    """``$ARGNB_CACHE_DIR/datasets`` or the platform's user cache dir + ``/datasets``."""
    from platformdirs import user_cache_dir

    return Path(os.environ.get("ARGNB_CACHE_DIR") or user_cache_dir("argnb")) / "datasets"


def fetch(
    source: str,
    split: str = "test",
    *,
    cache: str | Path | None = None,
    url: str | None = None,
    refresh: bool = False,
    timeout: float = 60.0,
) -> Path:
    """Download a dataset file from its original location once; later calls use the cached copy."""
    if source not in URLS:
        raise ArgnbError(f"unknown dataset {source!r}", hint=f"use one of {', '.join(SOURCES)}")
    src = url or URLS[source].format(split=split)
    name = src.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
    dest = Path(cache or cache_dir()) / source / name
    if dest.exists() and not refresh:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = ""
    try:
        with urlopen(src, timeout=timeout) as resp:
            fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
            with os.fdopen(fd, "wb") as f:
                shutil.copyfileobj(resp, f)
        os.replace(tmp, dest)
    except OSError as exc:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)  # never leave half a file where the next run would trust it
        raise ArgnbError(
            f"could not download {source} from {src}: {exc}",
            hint="check your internet connection, or download the file yourself and pass its path",
        ) from exc
    return dest


def shared_data(relative: str = "fallacy-bench/dev.jsonl") -> Path | None:
    """A file of the course's local data folder (``../shared/data`` next to the project), if any.

    Looked up in ``$ARGNB_SHARED_DATA``, next to the project checkout, then upwards from the
    working directory. ``None`` when absent: callers fall back to the small samples in ``assets``.
    """
    roots = []
    if os.environ.get("ARGNB_SHARED_DATA"):
        roots.append(Path(os.environ["ARGNB_SHARED_DATA"]))
    roots.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    roots += [p / "shared" / "data" for p in [Path.cwd(), *Path.cwd().parents]]
    for root in roots:
        if (root / relative).exists():
            return root / relative
    return None


def sample(items: list[dict], n: int, *, seed: int = 0, by: str | None = "source") -> list[dict]:
    """A reproducible sample of ``n`` items, spread over the values of ``by`` (round robin)."""
    import random

    rng = random.Random(seed)
    if by is None:
        return rng.sample(items, min(n, len(items)))
    groups: dict[Any, list[dict]] = {}
    for it in items:
        groups.setdefault(it.get(by), []).append(it)
    for g in groups.values():
        rng.shuffle(g)
    out: list[dict] = []
    keys = sorted(groups, key=str)
    while len(out) < min(n, len(items)):
        for k in keys:
            if groups[k] and len(out) < n:
                out.append(groups[k].pop())
    return out
