"""Positions, critiques and human ratings: the dataset type and its loaders.

Our own format is JSON Lines, one critique per line::

    {"position_id": "...", "position": "...", "critique_id": "...", "critique": "...",
     "ratings": {"rater name": {"centrality": 1.0, "strength": 0.6, ..., "overall": 0.55}}}

Several raters per critique are allowed (as in the paper, where a few experts rated overlapping
subsets); a rater may leave a dimension out. :func:`load_acorn` reads an export of the public
ACORN release (JSON Lines, JSON or YAML) into the same type, and :func:`load_class_ratings` reads a
table of a class's ratings so students can be scored like judges.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from argnb.course import asset_dir
from argnb.critique.rubric import DIMENSIONS, clean_ratings
from argnb.datafiles import read_text
from argnb.errors import DataError

#: the course's critique data, in a checkout or inside an installed wheel
ASSETS = asset_dir("critique")

#: ``human=`` value meaning "average the raters, dimension by dimension"
MEAN = "mean"


class RatedCritique(BaseModel):
    """One critique of one position, with every human rating it has."""

    position_id: str
    position: str
    critique_id: str
    critique: str
    ratings: dict[str, dict[str, float]] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("ratings", mode="before")
    @classmethod
    def _clean(cls, value: Any) -> dict[str, dict[str, float]]:
        if not isinstance(value, Mapping):
            raise ValueError("ratings must map rater name -> {dimension: value}")
        return {str(r): clean_ratings(v, where=f"rater {r}") for r, v in value.items()}

    def reference(self, human: str = MEAN) -> dict[str, float]:
        """The rating to score against: one named rater's, or the per-dimension mean of all."""
        if human != MEAN:
            return dict(self.ratings.get(human, {}))
        sums: dict[str, list[float]] = {}
        for rating in self.ratings.values():
            for dim, v in rating.items():
                sums.setdefault(dim, []).append(v)
        return {d: sum(sums[d]) / len(sums[d]) for d in DIMENSIONS if d in sums}


class CritiqueDataset:
    """An ordered collection of rated critiques, grouped by position."""

    def __init__(self, items: Iterable[RatedCritique], *, name: str = "") -> None:
        self.items = list(items)
        self.name = name
        self._by_id: dict[str, RatedCritique] = {}
        for it in self.items:
            if it.critique_id in self._by_id:
                raise DataError(f"duplicate critique_id {it.critique_id!r} in {name or 'dataset'}")
            self._by_id[it.critique_id] = it

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[RatedCritique]:
        return iter(self.items)

    def __getitem__(self, critique_id: str) -> RatedCritique:
        try:
            return self._by_id[critique_id]
        except KeyError:
            raise KeyError(f"no critique {critique_id!r} in {self.name or 'the dataset'}") from None

    def __contains__(self, critique_id: object) -> bool:
        return critique_id in self._by_id

    def __repr__(self) -> str:
        return (
            f"CritiqueDataset({self.name or 'unnamed'}: {len(self.positions())} positions, "
            f"{len(self)} critiques, raters {', '.join(self.raters()) or '-'})"
        )

    @property
    def ids(self) -> list[str]:
        return [it.critique_id for it in self.items]

    def positions(self) -> dict[str, str]:
        """position_id -> position text, in order of first appearance."""
        return {it.position_id: it.position for it in self.items}

    def by_position(self) -> dict[str, list[RatedCritique]]:
        groups: dict[str, list[RatedCritique]] = {}
        for it in self.items:
            groups.setdefault(it.position_id, []).append(it)
        return groups

    def raters(self) -> list[str]:
        seen: dict[str, None] = {}
        for it in self.items:
            for r in it.ratings:
                seen.setdefault(r, None)
        return list(seen)

    def reference(self, human: str = MEAN) -> dict[str, dict[str, float]]:
        """critique_id -> the human rating to score against (critiques the rater skipped are left out)."""
        if human != MEAN and human not in self.raters():
            raise DataError(
                f"no rater {human!r} in {self.name or 'the dataset'}",
                hint=f"raters are: {', '.join(self.raters())} (or use {MEAN!r})",
            )
        out = {}
        for it in self.items:
            ref = it.reference(human)
            if ref:
                out[it.critique_id] = ref
        return out

    def subset(self, critique_ids: Iterable[str]) -> CritiqueDataset:
        keep = set(critique_ids)
        return CritiqueDataset([it for it in self.items if it.critique_id in keep], name=self.name)

    def to_dataframe(self, human: str | None = None) -> Any:
        """One row per (critique, rater) -- or per critique with ``human=`` (``"mean"`` or a rater)."""
        import pandas as pd

        rows = []
        for it in self.items:
            base = {"position_id": it.position_id, "critique_id": it.critique_id}
            if human is not None:
                rows.append({**base, **it.reference(human)})
                continue
            for rater, rating in it.ratings.items():
                rows.append({**base, "rater": rater, **rating})
        return pd.DataFrame(rows)

    def save_jsonl(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", encoding="utf-8") as f:
            for it in self.items:
                rec = it.model_dump(exclude={"meta"} if not it.meta else set())
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return p


# -- loaders ---------------------------------------------------------------------------------------


def _records(path: Path) -> list[dict[str, Any]]:
    """Records of a .jsonl, .json (a list, or {"data"/"items": [...]}) or .yaml/.yml file."""
    text = read_text(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif suffix == ".json":
            data = json.loads(text)
        else:
            data = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise DataError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
    except DataError:
        raise
    except Exception as exc:  # json / yaml parse errors carry their own positions
        raise DataError(f"{path}: cannot parse ({exc})") from None
    if isinstance(data, Mapping):
        for key in ("data", "items", "critiques", "tests"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise DataError(f"{path}: expected a list of records (one per critique)")
    return list(data)


def load_jsonl(path: str | Path) -> CritiqueDataset:
    """Load our own format (see the module docstring)."""
    p = Path(path)
    items = []
    for n, rec in enumerate(_records(p), 1):
        try:
            items.append(RatedCritique.model_validate(rec))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
            raise DataError(f"{p}: record {n}: {problems}") from None
    return CritiqueDataset(items, name=p.stem)


def load_examples() -> CritiqueDataset:
    """The small example dataset written for argnb (6 positions, 21 critiques, 3-4 raters)."""
    return load_jsonl(ASSETS / "examples.jsonl")


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        value = value.get("content", value.get("text", ""))
    return str(value or "").strip()


def _pick_revision(value: Any, revision: str) -> Mapping[str, Any] | None:
    """A rater's rating: a dict, or a list of revisions (the original first, later ones after)."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, list):
        revisions = [v for v in value if isinstance(v, Mapping)]
        if not revisions:
            return None
        return revisions[-1] if revision == "last" else revisions[0]
    return None


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def load_acorn(path: str | Path, *, revision: str = "last") -> CritiqueDataset:
    """Load an export of the public ACORN release (or a record list shaped like it).

    Accepted record shapes, in a .jsonl, .json or .yaml file:

    - the release's: ``{"messages": [position, critique], "ratings": {rater: [rating, ...]}}``
      where messages may be strings or ``{"content": ...}`` and each rater holds a list of
      revisions (the original first). ``revision="last"`` (default) uses each rater's latest
      revision, ``"first"`` the original;
    - flat: ``{"position", "critique", "ratings": {rater: rating}}`` (``argument``/``response``
      accepted as the older names);
    - a promptfoo-style YAML export: ``{"vars": {"position", "critique"},
      "metadata": {"human_ratings": {...}}}`` (one rater, called ``"human"``).

    Dimension names may use spaces or underscores. Ids come from ``critique_id``/``id`` when
    present, otherwise from the record's index; position ids from ``position_id`` or a hash of the
    position text, so critiques of the same position are grouped for the ranking metrics.
    """
    if revision not in ("last", "first"):
        raise ValueError("revision must be 'last' or 'first'")
    p = Path(path)
    items = []
    for n, rec in enumerate(_records(p)):
        where = f"{p}: record {n + 1}"
        vars_ = rec.get("vars") if isinstance(rec.get("vars"), Mapping) else {}
        messages = rec.get("messages")
        if isinstance(messages, list) and len(messages) >= 2:
            position, critique = _text(messages[0]), _text(messages[1])
        else:
            position = _text(rec.get("position", rec.get("argument", vars_.get("position"))))
            critique = _text(rec.get("critique", rec.get("response", vars_.get("critique"))))
        if not position or not critique:
            raise DataError(f"{where}: no position and critique text found")
        raw = rec.get("ratings")
        if raw is None and isinstance(rec.get("metadata"), Mapping):
            human = rec["metadata"].get("human_ratings")
            raw = {"human": human} if human else {}
        ratings: dict[str, dict[str, float]] = {}
        for rater, value in (raw or {}).items():
            chosen = _pick_revision(value, revision)
            if chosen is None:
                continue
            try:
                clean = clean_ratings(chosen, where=f"{where}, rater {rater}")
            except ValueError as exc:
                raise DataError(str(exc)) from None
            if clean:
                ratings[str(rater)] = clean
        meta_keys = ("source", "tags", "topic", "description")
        meta = {k: rec[k] for k in meta_keys if k in rec}
        cid = rec.get("critique_id", rec.get("id"))
        items.append(
            RatedCritique(
                position_id=str(rec.get("position_id") or f"pos-{_short_hash(position)}"),
                position=position,
                critique_id=str(cid) if cid is not None else f"acorn-{n}",
                critique=critique,
                ratings=ratings,
                meta=meta,
            )
        )
    return CritiqueDataset(items, name=p.stem)


def load(path: str | Path) -> CritiqueDataset:
    """Our format when every record has ``critique_id`` and ``position_id``; ACORN otherwise."""
    p = Path(path)
    records = _records(p)
    if records and all("critique_id" in r and "position_id" in r for r in records):
        return load_jsonl(p)
    return load_acorn(p)


# -- a class's ratings -----------------------------------------------------------------------------


def load_class_ratings(
    source: str | Path | Any, *, rater_column: str = "rater"
) -> dict[str, dict[str, dict[str, float]]]:
    """A table of learners' ratings -> ``{learner: {critique_id: {dimension: value}}}``.

    ``source`` is a CSV path or a DataFrame with one row per (learner, critique): a learner column
    (``rater`` by default; ``student``/``learner``/``name`` are recognised too), ``critique_id``, and
    any of the seven dimensions (``dead weight`` or ``dead_weight``). Empty cells mean "not rated".
    """
    import pandas as pd

    df = source if isinstance(source, pd.DataFrame) else pd.read_csv(Path(source))
    col = rater_column
    if col not in df.columns:
        col = next((c for c in ("student", "learner", "name") if c in df.columns), col)
    if col not in df.columns or "critique_id" not in df.columns:
        raise DataError(
            "the ratings table needs a learner column and a critique_id column",
            hint=f"columns found: {', '.join(map(str, df.columns))}",
        )
    out: dict[str, dict[str, dict[str, float]]] = {}
    for n, row in enumerate(df.to_dict("records"), 2):
        learner, cid = str(row.pop(col)), str(row.pop("critique_id"))
        try:
            rating = clean_ratings(row, where=f"row {n} ({learner}, {cid})")
        except ValueError as exc:
            raise DataError(str(exc)) from None
        if rating:
            out.setdefault(learner, {})[cid] = rating
    return out
