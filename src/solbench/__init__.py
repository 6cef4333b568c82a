"""solbench: evaluate compute kernels against a PyTorch reference and the hardware's speed of light.

The public API (`load_problem`, `load_solution`, `evaluate`, `analyze`, `score`, `run_suite`, `baseline`,
`EvaluationConfig`) lives in `solbench.api` and is imported on first use, so `import solbench` stays light (no
torch).
`make` and `Budget`, the optimisation environment, come from `solbench.optimize` the same way, and `connect`, the
same environment served by a leaderboard service, from `solbench.service.env_client`.
"""

from typing import TYPE_CHECKING

from solbench.version import __version__

if TYPE_CHECKING:  # what __getattr__ imports on first use, named here for type checkers
    from solbench.api import (
        EvaluationConfig,
        analyze,
        baseline,
        evaluate,
        load_problem,
        load_solution,
        run_suite,
        score,
    )
    from solbench.optimize import Budget, make
    from solbench.service.env_client import connect

_API = ("EvaluationConfig", "analyze", "baseline", "evaluate", "load_problem", "load_solution", "run_suite", "score")
_OPTIMIZE = ("Budget", "make")
_SERVICE = ("connect",)


def __getattr__(name: str):
    if name in _API:
        from solbench import api

        return getattr(api, name)
    if name in _OPTIMIZE:
        from solbench import optimize

        return getattr(optimize, name)
    if name in _SERVICE:
        from solbench.service import env_client

        return getattr(env_client, name)
    raise AttributeError(f"module 'solbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, *_OPTIMIZE, *_SERVICE])


# Spelled out (type checkers read only a literal list): "__version__", then _API, then _OPTIMIZE, then _SERVICE.
__all__ = [
    "__version__",
    "EvaluationConfig",
    "analyze",
    "baseline",
    "evaluate",
    "load_problem",
    "load_solution",
    "run_suite",
    "score",
    "Budget",
    "make",
    "connect",
]  # written out for type checkers; test_api checks it is _API's
