"""Scoring: the SOL score per workload, the one aggregation per problem and set, baselines as versioned data."""

from solbench.scoring.aggregate import aggregate, geometric_mean, score_trace, set_total
from solbench.scoring.baselines import Baseline, Baselines, as_baselines, load_baselines, save_baselines
from solbench.scoring.errors import ScoreError
from solbench.scoring.report import (
    SET_MISSING_RULES,
    UNSCORED_POLICY,
    ProblemScore,
    ScoreReport,
    SetMissing,
    SetScore,
    WorkloadScore,
)
from solbench.scoring.sol_score import SolScore, mean_score, sol_score
from solbench.scoring.traces import attach_sol, recorded_t_sol, score_trace_file, score_traces

__all__ = [
    "SET_MISSING_RULES",
    "UNSCORED_POLICY",
    "Baseline",
    "Baselines",
    "ProblemScore",
    "ScoreError",
    "ScoreReport",
    "SetMissing",
    "SetScore",
    "SolScore",
    "WorkloadScore",
    "aggregate",
    "as_baselines",
    "attach_sol",
    "geometric_mean",
    "load_baselines",
    "mean_score",
    "recorded_t_sol",
    "save_baselines",
    "score_trace",
    "score_trace_file",
    "score_traces",
    "set_total",
    "sol_score",
]
