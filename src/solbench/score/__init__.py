"""Scoring: the SOL score per workload, aggregation per problem and set, baselines as versioned data."""

from solbench.score.aggregate import ProblemScore, WorkloadScore, by_problem, by_set, score_trace
from solbench.score.baselines import Baseline, Baselines, load_baselines, save_baselines
from solbench.score.errors import ScoreError
from solbench.score.sol_score import SolScore, mean_score, sol_score

__all__ = ["Baseline", "Baselines", "ProblemScore", "ScoreError", "SolScore", "WorkloadScore", "by_problem",
           "by_set", "load_baselines", "mean_score", "save_baselines", "score_trace", "sol_score"]
