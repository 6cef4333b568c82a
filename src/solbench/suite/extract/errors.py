"""The extractor's one error type: bad input the user can fix, printed by the CLI as one line."""

from solbench.errors import SolbenchError


class ExtractError(SolbenchError):
    """A model, module kind or configuration that cannot be extracted, and why."""


def require_transformers():
    """Import Hugging Face transformers, or say how to install it."""
    try:
        import transformers
    except ImportError as error:
        raise ExtractError(
            "solbench extract needs Hugging Face transformers: pip install 'solbench[extract]'"
        ) from error
    return transformers
