"""`solbench extract`: turn a module of a real model (built by transformers from its published config,
random weights) into a standalone problem folder.

    configs    model records -> config values
    modules    which module kinds each architecture offers, how each is built and called
    capture    torch.export with dynamic token / sequence dims, weights lifted to inputs
    codegen    the exported graph -> plain torch code (no transformers import)
    writer     -> ProblemDraft (origin "extract") -> problem folder
    extractor  the steps above, with a check of the generated reference against the module
"""

from solbench.suite.extract.errors import ExtractError
from solbench.suite.extract.extractor import Request, extract

__all__ = ["ExtractError", "Request", "extract"]
