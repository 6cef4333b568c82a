"""Reference code shared by recipes of several modules, kept once: a recipe formats a snippet into its reference
text (``REFERENCE = ACC + '''...'''``), so every problem that uses it carries the same lines.

Each snippet is one or more whole top-level functions, ending with a newline; the recipes' own text supplies the
blank lines around it. Changing one changes every folder whose reference holds it (`scripts/build-suite`
rewrites them; the lines a problem says it follows stay true only where the code is the same).
"""

ACC = '''def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32
'''
"""The working precision of a reference: fp32, or fp64 in the evaluator's fp64 golden run (l2, nvfp4)."""

E2M1_CODES = '''def _e2m1_codes(v):
    """fp32 values (already scaled) -> 4-bit codes, round-to-nearest-even, saturating at 6."""
    a = v.abs()
    magnitude = (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8) \\
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8) \\
        + (a > 5.0).to(torch.uint8)
    return magnitude | ((v < 0).to(torch.uint8) << 3)
'''
"""The NVFP4 (E2M1) encoder: already scaled fp32 values to 4-bit codes, round-to-nearest-even, saturating at 6
(quant's NVFP4 / MXFP4 problems, nvfp4)."""

