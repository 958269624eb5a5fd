"""Critique rating: the 7-dimension rubric, LLM judges, and metrics that score judges against experts.

from argnb.critique import load_examples, Judge, run_judge, score
data = load_examples()
preds = run_judge(Judge(argnb.connect(), "rubric"), data, out="preds.jsonl")
print(score(data, preds))
"""

from argnb.critique.data import (
    CritiqueDataset,
    DataError,
    RatedCritique,
    load,
    load_acorn,
    load_class_ratings,
    load_examples,
    load_jsonl,
)
from argnb.critique.judge import Judge, Judgement, read_predictions, run_judge
from argnb.critique.metrics import (
    custom_weighted_loss,
    kendall_tau,
    mean_custom_loss,
    mse,
    pairwise_ranking_error,
    ranking_pairs,
    recalibrate,
    score,
    score_many,
    weighted_pairwise_ranking_error,
)
from argnb.critique.rubric import DEFINITIONS, DIMENSIONS, LABELS, Rating, rubric_table, rubric_text

__all__ = [
    "DEFINITIONS",
    "DIMENSIONS",
    "LABELS",
    "CritiqueDataset",
    "DataError",
    "Judge",
    "Judgement",
    "RatedCritique",
    "Rating",
    "custom_weighted_loss",
    "kendall_tau",
    "load",
    "load_acorn",
    "load_class_ratings",
    "load_examples",
    "load_jsonl",
    "mean_custom_loss",
    "mse",
    "pairwise_ranking_error",
    "ranking_pairs",
    "read_predictions",
    "recalibrate",
    "rubric_table",
    "rubric_text",
    "run_judge",
    "score",
    "score_many",
    "weighted_pairwise_ranking_error",
]
