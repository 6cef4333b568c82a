"""solbench: evaluate compute kernels against a PyTorch reference and the hardware's speed of light.

The public API (`load_problem`, `load_solution`, `evaluate`, `analyze`, `score`, `EvaluationConfig`)
lives in `solbench.api` and is imported on first use, so `import solbench` stays light (no torch).
"""

__version__ = "0.1.0"

_API = ("EvaluationConfig", "analyze", "evaluate", "load_problem", "load_solution", "score")


def __getattr__(name: str):
    if name in ("evaluate", "score"):  # layer packages too, made callable: see callable_package.py
        import importlib

        return importlib.import_module(f"solbench.{name}")
    if name in _API:
        from solbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'solbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
