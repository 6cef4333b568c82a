"""L1: single operators as they occur in real models (norms, activations, GEMMs, convolutions, attention,
vocabulary ops, embeddings, and their backward passes); `drafts()` lists them all. Each recipe makes its draft with
`catalog.builder.problem`.

CPU budget of the recipes' own workloads (the CPU tier, which CI runs through the evaluator on a 2-core CPU): at the
largest workload a reference call takes about 0.3 s or less, its float64 golden run about 1 s or less, and the
inputs stay under about 200 MB; the smallest workload is cheap.
"""

from suite_recipes.l1.instances import drafts

__all__ = ["drafts"]
