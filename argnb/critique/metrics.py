"""Scoring a judge (a model, a student, another expert) against human ratings, as the paper does.

Two families of metrics:

- **Ranking losses** look only at the order of critiques *of the same position* by their overall
  score. For every pair the human rated differently, the judge loses 0 for the same order, 1 for the
  opposite order and 1/2 for a tie (*pairwise ranking error*); the *weighted* version charges the
  human's score difference for a wrong order and half of it for a tie. Losses are averaged within each
  position, then across positions, so a position with many critiques does not dominate. A position
  with a single critique, or whose critiques the human rated all alike, has no pairs and contributes
  nothing. Ranking losses ignore calibration: any order-preserving change of a judge's scores leaves
  them unchanged.
- **Point-wise losses** compare the numbers: the paper's *custom weighted loss* (below), and the MSE
  and Kendall's tau of the overall score. These do depend on calibration; :func:`recalibrate` maps a
  judge's scores onto the human score distribution (keeping their order) to take that out.

:func:`score` computes all of them with bootstrap 95% confidence intervals (resampling positions,
since the ranking losses are per position), next to a judge that always predicts the dataset mean
and a judge that rates uniformly at random.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from argnb.critique.rubric import DIMENSIONS

#: two scores closer than this count as a tie (means of raters carry float noise)
TIE_EPS = 1e-9
_SPREAD = 1e-6  # see recalibrate()

#: the custom loss's weights when the human finds the critique clear (they sum to 1)
CLEAR_WEIGHTS: dict[str, float] = {
    "overall": 0.5,
    "refutation": 0.2,  # centrality x strength, never either factor alone
    "clarity": 0.1,
    "correctness": 0.1,
    "dead_weight": 0.05,
    "single_issue": 0.05,
}
#: ... and when the human's clarity is below :data:`CLARITY_THRESHOLD` (other scores are unreliable)
UNCLEAR_WEIGHTS: dict[str, float] = {"overall": 0.5, "clarity": 0.5}
CLARITY_THRESHOLD = 0.5

Rating = Mapping[str, float]


# -- ranking losses ----------------------------------------------------------------------------------


def _nanmean(values: list[float]) -> float:
    """Mean of the defined values; NaN (without numpy's warning) when none is defined."""
    arr = np.asarray(values, dtype=float)
    return float(arr[~np.isnan(arr)].mean()) if (~np.isnan(arr)).any() else float("nan")


def _sign(d: float) -> int:
    return 0 if abs(d) <= TIE_EPS else (1 if d > 0 else -1)


@dataclass(frozen=True)
class Pair:
    """One comparison the ranking losses count: critiques ``i`` and ``j`` of one position."""

    position: Hashable
    i: int
    j: int
    human_diff: float  # |human_i - human_j| > 0
    verdict: str  # "agree" | "tie" | "disagree"

    @property
    def loss(self) -> float:
        return {"agree": 0.0, "tie": 0.5, "disagree": 1.0}[self.verdict]

    @property
    def weighted_loss(self) -> float:
        return self.loss * self.human_diff


def ranking_pairs(
    positions: Sequence[Hashable], human: Sequence[float], pred: Sequence[float]
) -> list[Pair]:
    """Every pair of critiques of the same position that the human rated differently.

    ``positions[k]``, ``human[k]`` and ``pred[k]`` describe critique ``k``. Critiques whose human or
    predicted score is missing (None or NaN) take part in no pair.
    """
    if not len(positions) == len(human) == len(pred):
        raise ValueError("positions, human and pred must have the same length")
    ok = [k for k in range(len(positions)) if _present(human[k]) and _present(pred[k])]
    pairs = []
    for a, i in enumerate(ok):
        for j in ok[a + 1 :]:
            if positions[i] != positions[j]:
                continue
            h = _sign(human[i] - human[j])
            if h == 0:
                continue  # the human sees no difference: nothing to get right or wrong
            m = _sign(pred[i] - pred[j])
            verdict = "tie" if m == 0 else ("agree" if m == h else "disagree")
            pairs.append(Pair(positions[i], i, j, abs(human[i] - human[j]), verdict))
    return pairs


def position_errors(
    positions: Sequence[Hashable],
    human: Sequence[float],
    pred: Sequence[float],
    *,
    weighted: bool = False,
) -> dict[Hashable, float]:
    """Mean pair loss of each position that has at least one pair."""
    sums: dict[Hashable, list[float]] = {}
    for p in ranking_pairs(positions, human, pred):
        sums.setdefault(p.position, []).append(p.weighted_loss if weighted else p.loss)
    return {pos: sum(v) / len(v) for pos, v in sums.items()}


def pairwise_ranking_error(
    positions: Sequence[Hashable], human: Sequence[float], pred: Sequence[float]
) -> float:
    """Share of same-position pairs ordered against the human (a tie counts half).

    Averaged within each position, then across positions; NaN when no position has a pair.
    """
    per = position_errors(positions, human, pred)
    return sum(per.values()) / len(per) if per else math.nan


def weighted_pairwise_ranking_error(
    positions: Sequence[Hashable], human: Sequence[float], pred: Sequence[float]
) -> float:
    """Like :func:`pairwise_ranking_error`, but a wrong order costs the human's score difference
    and a tie half of it -- so confusing 0.45 with 0.43 costs little, 0.9 with 0.1 a lot."""
    per = position_errors(positions, human, pred, weighted=True)
    return sum(per.values()) / len(per) if per else math.nan


# -- point-wise losses -------------------------------------------------------------------------------


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _value(r: Rating, key: str) -> float | None:
    if key == "refutation":
        c, s = r.get("centrality"), r.get("strength")
        return c * s if _present(c) and _present(s) else None
    v = r.get(key)
    return v if _present(v) else None


def custom_loss_terms(human: Rating, pred: Rating) -> list[tuple[str, float, float]]:
    """The terms of the custom loss that apply: ``(name, weight, |human - pred|)``.

    A term is used only when both sides have its value (``refutation`` needs centrality and
    strength on both sides). The unclear branch applies when the human's clarity is below 0.5;
    when the human gave no clarity the clear branch applies.
    """
    hc = _value(human, "clarity")
    weights = UNCLEAR_WEIGHTS if hc is not None and hc < CLARITY_THRESHOLD else CLEAR_WEIGHTS
    terms = []
    for key, w in weights.items():
        h, p = _value(human, key), _value(pred, key)
        if h is not None and p is not None:
            terms.append((key, w, abs(h - p)))
    return terms


def custom_weighted_loss(human: Rating, pred: Rating) -> float:
    """The paper's custom weighted loss of one critique.

    If the human's clarity is below 0.5: 0.5·|Δoverall| + 0.5·|Δclarity|. Otherwise
    0.5·|Δoverall| + 0.2·|Δ(centrality·strength)| + 0.1·|Δclarity| + 0.1·|Δcorrectness|
    + 0.05·|Δdead weight| + 0.05·|Δsingle issue|.

    Missing dimensions (a judge that rates only ``overall``, a rater who skipped one) drop their
    term and the remaining weights are rescaled to sum to 1, so the loss stays on the same scale;
    with all dimensions present this is exactly the formula above. NaN when either side lacks
    ``overall``.
    """
    if _value(human, "overall") is None or _value(pred, "overall") is None:
        return math.nan
    terms = custom_loss_terms(human, pred)
    return sum(w * d for _, w, d in terms) / sum(w for _, w, _ in terms)


def mean_custom_loss(humans: Iterable[Rating], preds: Iterable[Rating]) -> float:
    """Average :func:`custom_weighted_loss` over critiques (those without overall are skipped)."""
    vals = [custom_weighted_loss(h, p) for h, p in zip(humans, preds, strict=True)]
    vals = [v for v in vals if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def mse(human: Sequence[float], pred: Sequence[float]) -> float:
    """Mean squared error over the critiques where both scores are present."""
    pairs = [(h, p) for h, p in zip(human, pred, strict=True) if _present(h) and _present(p)]
    return sum((h - p) ** 2 for h, p in pairs) / len(pairs) if pairs else math.nan


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (ties in either list handled); NaN if fewer than two items or a list is constant.

    tau-b = (concordant - discordant) / sqrt((n0 - ties_x) * (n0 - ties_y)), n0 = n(n-1)/2.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError("x and y must have the same length")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = len(a)
    if n < 2:
        return math.nan
    iu = np.triu_indices(n, k=1)
    da, db = (a[:, None] - a[None, :])[iu], (b[:, None] - b[None, :])[iu]
    sa = np.where(np.abs(da) <= TIE_EPS, 0.0, np.sign(da))
    sb = np.where(np.abs(db) <= TIE_EPS, 0.0, np.sign(db))
    n0 = len(sa)
    denom = math.sqrt((n0 - np.sum(sa == 0)) * (n0 - np.sum(sb == 0)))
    return float(np.sum(sa * sb) / denom) if denom > 0 else math.nan


def recalibrate(pred: Sequence[float], human: Sequence[float]) -> list[float]:
    """Map a judge's scores onto the human score distribution, keeping their order.

    The k-th smallest prediction gets the k-th smallest human score; tied predictions share the
    average of their human quantiles. The map is strictly increasing -- where several human scores
    are equal, distinct predictions landing on them are kept apart by at most ``1e-6`` -- so ranking
    losses and Kendall's tau are exactly unchanged, while MSE and the custom loss no longer reward
    or punish a judge for its prior about how good critiques usually are.
    """
    p, h = np.asarray(pred, dtype=float), np.sort(np.asarray(human, dtype=float))
    if len(p) != len(h):
        raise ValueError("recalibrate needs one human score per prediction")
    if len(p) == 0:
        return []
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p))
    sp = p[order]
    start = 0
    for end in range(1, len(p) + 1):  # average rank over runs of tied predictions
        if end == len(p) or abs(sp[end] - sp[start]) > TIE_EPS:
            ranks[order[start:end]] = (start + end - 1) / 2
            start = end
    target = np.interp(ranks, np.arange(len(h)), h)
    if len(p) > 1:  # blend in a hair of the rank itself: strictly increasing, still within [0, 1]
        target = (1 - _SPREAD) * target + _SPREAD * ranks / (len(p) - 1)
    return [float(v) for v in target]


# -- scoring a whole dataset -------------------------------------------------------------------------

METRICS: tuple[str, ...] = (
    "pairwise_ranking_error",
    "weighted_pairwise_ranking_error",
    "custom_loss",
    "mse_overall",
    "kendall_tau_overall",
)
#: lower is better for all but Kendall's tau
HIGHER_IS_BETTER = {"kendall_tau_overall"}


def as_ratings(predictions: Any) -> dict[str, dict[str, float]]:
    """Accept ``{critique_id: {dim: value}}`` or prediction records with ``critique_id``/``ratings``."""
    if isinstance(predictions, Mapping):
        return {str(k): dict(v) for k, v in predictions.items()}
    out = {}
    for rec in predictions:
        out[str(rec["critique_id"])] = dict(rec.get("ratings") or {})
    return out


@dataclass
class _Table:
    """Scored critiques as arrays: positions, human and predicted values (NaN = missing)."""

    ids: list[str]
    pos: np.ndarray  # position index per critique
    n_pos: int
    human: dict[str, np.ndarray]
    pred: dict[str, np.ndarray]
    members: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        positions: Sequence[str],
        human: Mapping[str, Rating],
        pred: Mapping[str, Rating],
    ) -> _Table:
        names = list(dict.fromkeys(positions))
        index = {p: k for k, p in enumerate(names)}
        pos = np.array([index[p] for p in positions], dtype=int)

        def col(src: Mapping[str, Rating], dim: str) -> np.ndarray:
            return np.array(
                [v if _present(v := src.get(c, {}).get(dim)) else np.nan for c in ids], dtype=float
            )

        t = cls(
            list(ids),
            pos,
            len(names),
            {d: col(human, d) for d in DIMENSIONS},
            {d: col(pred, d) for d in DIMENSIONS},
        )
        t.members = [np.flatnonzero(pos == k) for k in range(len(names))]
        return t

    def with_pred(self, pred: dict[str, np.ndarray]) -> _Table:
        return _Table(self.ids, self.pos, self.n_pos, self.human, pred, self.members)


def _pair_index(t: _Table) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j, of critiques of one position with different human overall."""
    ii, jj = [], []
    h = t.human["overall"]
    for m in t.members:
        m = m[~np.isnan(h[m])]
        if len(m) < 2:
            continue
        a, b = np.triu_indices(len(m), k=1)
        keep = np.abs(h[m[a]] - h[m[b]]) > TIE_EPS
        ii.append(m[a][keep])
        jj.append(m[b][keep])
    if not ii:
        return np.zeros(0, int), np.zeros(0, int)
    return np.concatenate(ii), np.concatenate(jj)


def _custom_vector(h: dict[str, np.ndarray], p: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`custom_weighted_loss` for every critique at once (NaN where overall is missing)."""

    def val(src: dict[str, np.ndarray], key: str) -> np.ndarray:
        return src["centrality"] * src["strength"] if key == "refutation" else src[key]

    unclear = h["clarity"] < CLARITY_THRESHOLD  # NaN clarity -> False -> clear branch
    num = np.zeros(len(h["overall"]))
    den = np.zeros(len(h["overall"]))
    for weights, mask in ((CLEAR_WEIGHTS, ~unclear), (UNCLEAR_WEIGHTS, unclear)):
        for key, w in weights.items():
            d = np.abs(val(h, key) - val(p, key))
            use = mask & ~np.isnan(d)
            num[use] += w * d[use]
            den[use] += w
    out = np.full(len(num), np.nan)
    ok = ~np.isnan(h["overall"]) & ~np.isnan(p["overall"])
    out[ok] = num[ok] / den[ok]
    return out


@dataclass
class _PerPosition:
    """What each metric needs from each position, so a bootstrap resample is cheap."""

    rank_sum: np.ndarray
    wrank_sum: np.ndarray
    pairs: np.ndarray
    custom_sum: np.ndarray
    custom_n: np.ndarray
    sq_sum: np.ndarray
    sq_n: np.ndarray


def _per_position(t: _Table, pairs: tuple[np.ndarray, np.ndarray]) -> _PerPosition:
    h, p = t.human["overall"], t.pred["overall"]
    i, j = pairs
    ok = ~np.isnan(p[i]) & ~np.isnan(p[j])
    i, j = i[ok], j[ok]
    hs = np.sign(h[i] - h[j])
    dp = p[i] - p[j]
    ps = np.where(np.abs(dp) <= TIE_EPS, 0.0, np.sign(dp))
    loss = np.where(ps == 0, 0.5, np.where(ps == hs, 0.0, 1.0))
    wloss = loss * np.abs(h[i] - h[j])
    pos = t.pos[i]
    n = t.n_pos
    custom = _custom_vector(t.human, t.pred)
    cok = ~np.isnan(custom)
    sq = (h - p) ** 2
    sok = ~np.isnan(sq)
    return _PerPosition(
        rank_sum=np.bincount(pos, loss, n),
        wrank_sum=np.bincount(pos, wloss, n),
        pairs=np.bincount(pos, minlength=n).astype(float),
        custom_sum=np.bincount(t.pos[cok], custom[cok], n),
        custom_n=np.bincount(t.pos[cok], minlength=n).astype(float),
        sq_sum=np.bincount(t.pos[sok], sq[sok], n),
        sq_n=np.bincount(t.pos[sok], minlength=n).astype(float),
    )


def _metrics(t: _Table, pp: _PerPosition, sample: np.ndarray) -> dict[str, float]:
    """All metrics over the positions in ``sample`` (indices, repeats allowed)."""
    pairs = pp.pairs[sample]
    ranked = pairs > 0

    def ratio(num: np.ndarray, den: np.ndarray) -> float:
        d = den.sum()
        return float(num.sum() / d) if d > 0 else math.nan

    def pos_mean(s: np.ndarray) -> float:
        return float(np.mean(s[sample][ranked] / pairs[ranked])) if ranked.any() else math.nan

    members = np.concatenate([t.members[k] for k in sample]) if len(sample) else np.zeros(0, int)
    return {
        "pairwise_ranking_error": pos_mean(pp.rank_sum),
        "weighted_pairwise_ranking_error": pos_mean(pp.wrank_sum),
        "custom_loss": ratio(pp.custom_sum[sample], pp.custom_n[sample]),
        "mse_overall": ratio(pp.sq_sum[sample], pp.sq_n[sample]),
        "kendall_tau_overall": kendall_tau(t.human["overall"][members], t.pred["overall"][members]),
    }


def _ci(values: list[dict[str, float]], name: str) -> tuple[float, float]:
    arr = np.array([v[name] for v in values], dtype=float)
    arr = arr[~np.isnan(arr)]
    if len(arr) == 0:
        return math.nan, math.nan
    lo, hi = np.percentile(arr, [2.5, 97.5])
    return float(lo), float(hi)


@dataclass
class Metric:
    """A metric's value with its bootstrap 95% confidence interval."""

    value: float
    ci_low: float
    ci_high: float

    def __str__(self) -> str:
        if math.isnan(self.value):
            return "n/a"
        return f"{self.value:.3f} {self.ci_text()}"

    def ci_text(self) -> str:
        """The interval as "[low, high]"; "n/a" where it is undefined (never "[nan, nan]")."""
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return "n/a"
        return f"[{self.ci_low:.3f}, {self.ci_high:.3f}]"


@dataclass
class Scores:
    """All metrics of one judge, plus the mean-baseline and random-judge references."""

    judge: dict[str, Metric]
    mean_baseline: dict[str, Metric]
    random_judge: dict[str, Metric]
    info: dict[str, Any]

    def table(self) -> Any:
        """Rows: judge, mean baseline, random judge; columns: metrics ("value [low, high]")."""
        import pandas as pd

        rows = {
            self.info.get("judge_name", "judge"): self.judge,
            "mean baseline": self.mean_baseline,
            "random judge": self.random_judge,
        }
        return pd.DataFrame({r: {m: str(v[m]) for m in METRICS} for r, v in rows.items()}).T

    def to_dict(self) -> dict[str, Any]:
        """Flat ``metric -> value`` (CIs as ``<metric>_ci95: [low, high]``); NaN becomes None."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        out: dict[str, Any] = {}
        for prefix, group in (
            ("", self.judge),
            ("mean_baseline_", self.mean_baseline),
            ("random_judge_", self.random_judge),
        ):
            for name, m in group.items():
                out[prefix + name] = num(m.value)
                out[prefix + name + "_ci95"] = [num(m.ci_low), num(m.ci_high)]
        out.update(self.info)
        return out

    def __str__(self) -> str:
        lines = [
            f"{self.info.get('judge_name', 'judge')} vs human={self.info['human']}: "
            f"{self.info['n_critiques']} critiques, {self.info['n_positions']} positions "
            f"({self.info['n_positions_ranked']} with pairs, {self.info['n_pairs']} pairs), "
            f"coverage {self.info['coverage']:.0%}"
            + (", recalibrated" if self.info.get("recalibrated") else "")
        ]
        width = max(len(m) for m in METRICS)
        head = f"{'metric':<{width}}  {'judge':>24}  {'mean baseline':>24}  {'random judge':>24}"
        lines += [head, "-" * len(head)]
        for m in METRICS:
            lines.append(
                f"{m:<{width}}  {self.judge[m]!s:>24}  {self.mean_baseline[m]!s:>24}"
                f"  {self.random_judge[m]!s:>24}"
            )
        lines.append("95% bootstrap CIs over positions; lower is better except Kendall's tau.")
        return "\n".join(lines)


def _judge_dims(pred: Mapping[str, Rating]) -> list[str]:
    dims = {d for r in pred.values() for d, v in r.items() if _present(v)}
    return [d for d in DIMENSIONS if d in dims] or list(DIMENSIONS)


def score(
    dataset: Any,
    predictions: Any,
    *,
    human: str = "mean",
    n_boot: int = 1000,
    seed: int = 0,
    recalibrated: bool = False,
    judge_name: str = "judge",
    references: bool = True,
) -> Scores:
    """Score ``predictions`` against the dataset's human ratings with every metric and its CI.

    ``human`` is a rater's name or ``"mean"`` (per-dimension mean of all raters). Critiques without
    a human overall score or without a predicted overall score are left out (``coverage`` says how
    many were scored). The mean baseline and the random judge rate the same dimensions as the
    judge, so the custom loss compares like with like. With ``recalibrated=True`` each predicted
    dimension is first mapped onto the human distribution (:func:`recalibrate`).
    ``references=False`` leaves both references empty (two thirds of the work; a table of many
    judges shows them once, :func:`score_many`).
    """
    from argnb.critique.data import CritiqueDataset

    if not isinstance(dataset, CritiqueDataset):
        raise TypeError("dataset must be a CritiqueDataset (see argnb.critique.load)")
    pred = as_ratings(predictions)
    unknown = [c for c in pred if c not in dataset]
    if unknown:
        from argnb.errors import DataError

        raise DataError(
            f"{len(unknown)} predictions refer to critiques not in the dataset (e.g. {unknown[0]!r})",
            hint="score predictions against the data file they were made from",
        )
    ref = dataset.reference(human)
    rated = [it for it in dataset if "overall" in ref.get(it.critique_id, {})]
    scored = [it for it in rated if _present(pred.get(it.critique_id, {}).get("overall"))]
    ids = [it.critique_id for it in scored]
    t = _Table.build(ids, [it.position_id for it in scored], ref, pred)
    dims = _judge_dims(pred)
    for d in DIMENSIONS:  # the judge is scored on what it rated, nothing else
        if d not in dims:
            t.pred[d] = np.full(len(ids), np.nan)
    if recalibrated:
        for d in dims:
            ok = ~np.isnan(t.pred[d]) & ~np.isnan(t.human[d])
            t.pred[d][ok] = recalibrate(t.pred[d][ok], t.human[d][ok])

    pairs = _pair_index(t)
    rng = np.random.default_rng(seed)
    everything = np.arange(t.n_pos)
    samples = [rng.integers(0, t.n_pos, t.n_pos) for _ in range(n_boot)] if t.n_pos else []

    def summarise(tab: _Table, random_draws: bool = False) -> dict[str, Metric]:
        if not random_draws:
            pp = _per_position(tab, pairs)
            point = _metrics(tab, pp, everything)
            boots = [_metrics(tab, pp, s) for s in samples]
        else:  # a fresh random judge for every replicate: the CI covers both sources of noise
            full, boots = [], []
            for s in samples or [everything]:
                rt = tab.with_pred(_random_pred(tab, dims, rng))
                pp = _per_position(rt, pairs)
                full.append(_metrics(rt, pp, everything))
                boots.append(_metrics(rt, pp, s))
            point = {m: _nanmean([f[m] for f in full]) for m in METRICS}
        return {m: Metric(point[m], *_ci(boots, m)) for m in METRICS}

    mean_pred = {}
    for d in DIMENSIONS:
        col = t.human[d]
        mean = float(np.nanmean(col)) if d in dims and (~np.isnan(col)).any() else np.nan
        mean_pred[d] = np.full(len(ids), mean)
    n_pairs = len(pairs[0])
    info = {
        "judge_name": judge_name,
        "human": human,
        "n_critiques": len(ids),
        "n_rated": len(rated),
        "coverage": len(ids) / len(rated) if rated else 0.0,
        "n_positions": int(t.n_pos),
        "n_positions_ranked": len({int(t.pos[i]) for i in pairs[0]}),
        "n_pairs": n_pairs,
        "dimensions": dims,
        "recalibrated": recalibrated,
        "n_boot": n_boot,
    }
    with np.errstate(invalid="ignore"):
        return Scores(
            judge=summarise(t),
            mean_baseline=summarise(t.with_pred(mean_pred)) if references else {},
            random_judge=summarise(t, random_draws=True) if references else {},
            info=info,
        )


def _random_pred(t: _Table, dims: list[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = len(t.ids)
    return {d: rng.random(n) if d in dims else np.full(n, np.nan) for d in DIMENSIONS}


def score_many(
    dataset: Any,
    judges: Mapping[str, Any],
    *,
    human: str = "mean",
    n_boot: int = 1000,
    seed: int = 0,
    recalibrated: bool = False,
) -> Any:
    """One row per judge (model runs, students, other experts) with every metric and coverage.

    Columns are the metric values (NaN where undefined, e.g. Kendall's tau of a judge that gives
    every critique the same score); ``<metric>_ci`` columns hold "[low, high]" or "n/a". The last
    two rows are the mean baseline and the random judge, for reference, computed on the critiques
    and dimensions of the judge that covers the most critiques.
    """
    import pandas as pd

    rows = []
    widest: tuple[int, str] | None = None
    for name, preds in judges.items():
        s = score(
            dataset,
            preds,
            human=human,
            n_boot=n_boot,
            seed=seed,
            recalibrated=recalibrated,
            judge_name=name,
            references=False,
        )
        row: dict[str, Any] = {"judge": name, "critiques": s.info["n_critiques"]}
        for m in METRICS:
            row[m] = s.judge[m].value
            row[m + "_ci"] = s.judge[m].ci_text()
        rows.append(row)
        if widest is None or s.info["n_critiques"] > widest[0]:
            widest = (s.info["n_critiques"], name)
    if widest is not None:  # the references once, for the judge that covers the most critiques
        last = score(
            dataset,
            judges[widest[1]],
            human=human,
            n_boot=n_boot,
            seed=seed,
            recalibrated=recalibrated,
            judge_name=widest[1],
        )
        for label, group in (
            ("mean baseline", last.mean_baseline),
            ("random judge", last.random_judge),
        ):
            row = {"judge": label, "critiques": last.info["n_critiques"]}
            for m in METRICS:
                row[m] = group[m].value
                row[m + "_ci"] = group[m].ci_text()
            rows.append(row)
    return pd.DataFrame(rows).set_index("judge")
