"""Agreement between two scheme annotations (and two scorings) -- the paper's Table 3.

Given a reference annotation A (e.g. our gold set) and another annotation B (a model, a learner)
of the same passages, as JSON Lines rows ``{"id": ..., "schemes": {scheme: label or null}}``:

* **scheme sets** (multi-label, one yes/no decision per passage and scheme): mean Jaccard index,
  mean precision and recall of B against A, Hamming loss, Cohen's kappa over all decisions
  pooled (micro) and averaged over schemes (macro), Krippendorff's alpha (nominal, pooled);
* **quality labels** on the (passage, scheme) pairs both labelled (poor=1 ... excellent=4):
  Pearson, Spearman and Kendall correlations.

Conventions (stated because the paper does not): a passage with no scheme on either side has
Jaccard 1; B's precision on a passage where B found nothing is 1 if A found nothing too, else 0
(recall likewise); a scheme on which both sides make one constant decision has no kappa and is
left out of the macro mean; a row that B marked invalid counts as "no scheme". Implementations:
scikit-learn (Hamming loss, kappa), ``krippendorff`` (alpha), scipy (correlations).

    >>> a = {"1": {"analogy": "good"}, "2": {}}
    >>> b = {"1": {"analogy": "good", "values": "poor"}, "2": {}}
    >>> m = scheme_agreement(a, b, ["analogy", "values"])
    >>> m.jaccard, m.precision, m.hamming_loss
    (0.75, 0.75, 0.25)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from argnb.errors import ArgnbError

if TYPE_CHECKING:
    import pandas as pd

Labels = Mapping[str, str | None]
LABEL_VALUE = {"poor": 1, "general": 2, "good": 3, "excellent": 4}


def annotation_row(
    record_id: str, labels: Labels, *, annotator: str = "", valid: bool = True
) -> dict[str, Any]:
    """One line of an annotation file."""
    return {"id": record_id, "schemes": dict(labels), "annotator": annotator, "valid": valid}


@dataclass(frozen=True)
class AnnotationFile:
    """An annotation file read back: labels per id, who made them, which rows were invalid."""

    labels: dict[str, dict[str, str | None]]
    annotators: tuple[str, ...]
    invalid: frozenset[str]
    path: str = ""


def _labels_of(value: Any, where: str) -> dict[str, str | None]:
    if value is None:
        return {}
    if isinstance(value, list):
        return {str(s): None for s in value}
    if isinstance(value, dict):
        out: dict[str, str | None] = {}
        for s, lab in value.items():
            if lab is not None and lab not in LABEL_VALUE:
                raise ArgnbError(
                    f"{where}: unknown label {lab!r} for scheme {s!r}",
                    hint="labels are poor, general, good, excellent (or null)",
                )
            out[str(s)] = lab
        return out
    raise ArgnbError(f"{where}: 'schemes' must be an object or a list, not {type(value).__name__}")


def read_annotations(path: str | Path) -> AnnotationFile:
    """Read an annotation file (JSON Lines; ``schemes`` an object scheme -> label, or a list)."""
    from argnb.debate.inputs import read_rows

    labels: dict[str, dict[str, str | None]] = {}
    annotators: dict[str, None] = {}
    invalid: set[str] = set()
    for n, row in enumerate(read_rows(path), 1):
        if "id" not in row:
            raise ArgnbError(f"{path}, row {n} has no 'id'", hint="every row needs an id")
        rid = str(row["id"])
        labels[rid] = _labels_of(row.get("schemes"), f"{path}, row {n}")
        if row.get("annotator"):
            annotators[str(row["annotator"])] = None
        if row.get("valid") is False:
            invalid.add(rid)
    if not labels:
        raise ArgnbError(f"{path} holds no annotations")
    return AnnotationFile(labels, tuple(annotators), frozenset(invalid), str(path))


# -- metrics -----------------------------------------------------------------------------
def _none_if_nan(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)


@dataclass(frozen=True)
class SchemeAgreement:
    n: int
    jaccard: float
    precision: float
    recall: float
    hamming_loss: float
    kappa_micro: float | None
    kappa_macro: float | None
    alpha: float | None
    kappa_per_scheme: dict[str, float | None]


@dataclass(frozen=True)
class ScoreAgreement:
    n: int
    pearson: float | None
    spearman: float | None
    kendall: float | None


def _matrix(labels: Mapping[str, Labels], ids: Sequence[str], schemes: Sequence[str]) -> Any:
    import numpy as np

    return np.array(
        [[1 if s in labels.get(i, {}) else 0 for s in schemes] for i in ids], dtype=int
    ).reshape(len(ids), len(schemes))


def _kappa(a: Any, b: Any) -> float | None:
    """Cohen's kappa of two binary vectors; None when chance agreement is 1 (constant)."""
    from sklearn.metrics import cohen_kappa_score

    if len(set(a.tolist()) | set(b.tolist())) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _none_if_nan(cohen_kappa_score(a, b))


def _alpha(a: Any, b: Any) -> float | None:
    import krippendorff
    import numpy as np

    if len(set(a.tolist()) | set(b.tolist())) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _none_if_nan(
            krippendorff.alpha(
                reliability_data=np.vstack([a, b]).astype(float),
                level_of_measurement="nominal",
            )
        )


def scheme_agreement(
    ref: Mapping[str, Labels], pred: Mapping[str, Labels], schemes: Sequence[str]
) -> SchemeAgreement:
    """Set agreement on the ids of ``ref`` (an id missing from ``pred`` counts as no scheme)."""
    from sklearn.metrics import hamming_loss

    ids = list(ref)
    if not ids:
        raise ArgnbError("no passages to compare")
    ya, yb = _matrix(ref, ids, schemes), _matrix(pred, ids, schemes)
    jac, prec, rec = [], [], []
    for ra, rb in zip(ya, yb, strict=True):
        inter, na, nb = int((ra & rb).sum()), int(ra.sum()), int(rb.sum())
        union = na + nb - inter
        jac.append(inter / union if union else 1.0)
        prec.append(inter / nb if nb else float(na == 0))
        rec.append(inter / na if na else float(nb == 0))
    per = {s: _kappa(ya[:, j], yb[:, j]) for j, s in enumerate(schemes)}
    defined = [v for v in per.values() if v is not None]
    return SchemeAgreement(
        n=len(ids),
        jaccard=round(sum(jac) / len(ids), 4),
        precision=round(sum(prec) / len(ids), 4),
        recall=round(sum(rec) / len(ids), 4),
        hamming_loss=round(float(hamming_loss(ya, yb)), 4),
        kappa_micro=_kappa(ya.ravel(), yb.ravel()),
        kappa_macro=round(sum(defined) / len(defined), 4) if defined else None,
        alpha=_alpha(ya.ravel(), yb.ravel()),
        kappa_per_scheme=per,
    )


def score_agreement(ref: Mapping[str, Labels], pred: Mapping[str, Labels]) -> ScoreAgreement:
    """Correlations of quality labels over (passage, scheme) pairs labelled on both sides."""
    from scipy import stats

    xs, ys = [], []
    for rid, la in ref.items():
        lb = pred.get(rid, {})
        for s, lab in la.items():
            if lab is not None and lb.get(s) is not None:
                xs.append(LABEL_VALUE[lab])
                ys.append(LABEL_VALUE[lb[s]])  # type: ignore[index]
    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return ScoreAgreement(len(xs), None, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ScoreAgreement(
            n=len(xs),
            pearson=_none_if_nan(stats.pearsonr(xs, ys)[0]),
            spearman=_none_if_nan(stats.spearmanr(xs, ys)[0]),
            kendall=_none_if_nan(stats.kendalltau(xs, ys)[0]),
        )


@dataclass(frozen=True)
class Agreement:
    """Both tables for two annotation files, plus what did not match up."""

    reference: str
    other: str
    schemes: SchemeAgreement
    scores: ScoreAgreement
    only_reference: int
    only_other: int
    invalid_other: int
    scheme_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        """The paper's Table 3 shape: metric, value."""
        import pandas as pd

        s, c = self.schemes, self.scores
        rows = [
            ("Jaccard index (mean)", s.jaccard),
            ("Precision (mean)", s.precision),
            ("Recall (mean)", s.recall),
            ("Hamming loss", s.hamming_loss),
            ("Cohen's kappa (micro)", s.kappa_micro),
            ("Cohen's kappa (macro)", s.kappa_macro),
            ("Krippendorff's alpha (nominal)", s.alpha),
            ("Pearson (labels)", c.pearson),
            ("Spearman (labels)", c.spearman),
            ("Kendall (labels)", c.kendall),
        ]
        return pd.DataFrame(rows, columns=["metric", "value"])

    def __str__(self) -> str:
        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"

        s, c = self.schemes, self.scores
        lines = [
            f"{self.other} against {self.reference}: {s.n} passages "
            f"({self.invalid_other} invalid in the second file, {self.only_reference} missing "
            f"from it, {self.only_other} extra ignored)",
            f"  schemes  Jaccard {f(s.jaccard)}  precision {f(s.precision)}  recall "
            f"{f(s.recall)}  Hamming loss {f(s.hamming_loss)}",
            f"           Cohen's kappa micro {f(s.kappa_micro)}  macro {f(s.kappa_macro)}  "
            f"Krippendorff's alpha {f(s.alpha)}",
            f"  labels   n={c.n} pairs  Pearson {f(c.pearson)}  Spearman {f(c.spearman)}  "
            f"Kendall {f(c.kendall)}",
        ]
        return "\n".join(lines)


def agreement(
    reference: str | Path | AnnotationFile,
    other: str | Path | AnnotationFile,
    schemes: Sequence[str] | None = None,
) -> Agreement:
    """Compare two annotation files (the first is the reference) on the ids they share."""
    a = reference if isinstance(reference, AnnotationFile) else read_annotations(reference)
    b = other if isinstance(other, AnnotationFile) else read_annotations(other)
    if schemes is None:
        from argnb.debate.schemes import load_schemes

        known = list(load_schemes().ids)
        seen = {s for lab in (*a.labels.values(), *b.labels.values()) for s in lab}
        schemes = known + sorted(seen - set(known))
    shared = [i for i in a.labels if i in b.labels]
    if not shared:
        raise ArgnbError(
            f"{a.path or 'the reference'} and {b.path or 'the other file'} share no ids",
            hint="annotate the same passages (same ids) in both files",
        )
    ref = {i: a.labels[i] for i in shared}
    pred = {i: ({} if i in b.invalid else b.labels[i]) for i in shared}
    return Agreement(
        reference=", ".join(a.annotators) or a.path,
        other=", ".join(b.annotators) or b.path,
        schemes=scheme_agreement(ref, pred, schemes),
        scores=score_agreement(ref, pred),
        only_reference=len(set(a.labels) - set(b.labels)),
        only_other=len(set(b.labels) - set(a.labels)),
        invalid_other=len(b.invalid & set(a.labels)),
        scheme_ids=tuple(schemes),
    )
