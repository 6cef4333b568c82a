"""L1's op x model matrix: single operators (RMSNorm, LayerNorm, gated activations, linear layers and their backward
passes, cross-entropy backward) instantiated for the real models they occur in; `drafts()` lists them all. Each
recipe makes its draft with `suite_recipes.builder.problem` from a reference template of templates/l1/. (The
training module instantiates the backward recipes for more models.)

CPU budget of the recipes' own workloads (the CPU tier, which CI runs through the evaluator on a 2-core CPU): at the
largest workload a reference call takes about 0.3 s or less, its float64 golden run about 1 s or less, and the
inputs stay under about 200 MB; the smallest workload is cheap.
"""

from suite_recipes.l1.instances import drafts

__all__ = ["drafts"]
