"""L1: single operators as they occur in real models (norms, activations, GEMMs, convolutions, attention,
vocabulary ops, embeddings, and their backward passes); `drafts()` lists them all."""

from solbench.suite.catalog.l1.instances import drafts

__all__ = ["drafts"]
