"""The environment agents run against: a gym-style API over the public evaluator, its result cache and a budget."""

from solbench.optimize.baseline_search import AgentSearch
from solbench.optimize.budget import Budget, BudgetLedger, BudgetLeft
from solbench.optimize.card import ProblemCard, WorkloadCard
from solbench.optimize.env import Env, make, solution_from_text
from solbench.optimize.env_state import EnvState, WorkloadTimes
from solbench.optimize.errors import (
    AlreadyFinalized,
    BudgetExhausted,
    InvalidBudget,
    InvalidCandidate,
    InvalidHeldOut,
    InvalidReward,
    InvalidSeed,
    OptimizeError,
    RestoreMismatch,
    StateMismatch,
    UnknownWorkload,
)
from solbench.optimize.feedback import WorkloadFeedback
from solbench.optimize.held_out import split_workloads
from solbench.optimize.results import Candidate, FinalResult, StepInfo, StepResult, TestResult, TestStatus
from solbench.optimize.rewards import REWARDS, check_reward

__all__ = [
    "REWARDS",
    "AgentSearch",
    "AlreadyFinalized",
    "Budget",
    "BudgetExhausted",
    "BudgetLeft",
    "BudgetLedger",
    "Candidate",
    "Env",
    "EnvState",
    "FinalResult",
    "InvalidBudget",
    "InvalidCandidate",
    "InvalidHeldOut",
    "InvalidSeed",
    "InvalidReward",
    "OptimizeError",
    "ProblemCard",
    "RestoreMismatch",
    "StateMismatch",
    "StepInfo",
    "StepResult",
    "TestResult",
    "TestStatus",
    "UnknownWorkload",
    "WorkloadCard",
    "WorkloadFeedback",
    "WorkloadTimes",
    "check_reward",
    "make",
    "solution_from_text",
    "split_workloads",
]
