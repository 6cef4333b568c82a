"""GPU-tier workload sweeps at SOL-ExecBench's scale, shared by every recipe module (docs/tiers.md).

Each sweep has 16 values, chosen by what the axis means:

- `TRAIN_TOKENS`: flattened token counts of training and prefill batches, 1k to 64k, with a few small
  and odd ones mixed in (1, 16, 128, 1000, 3000) so that a kernel tuned only for powers of two shows it;
- `PREFILL_SEQUENCES`: (batch, tokens per sequence) pairs from 1 x 1k to 64k tokens;
- `DECODE_CONTEXTS`: (batch, context) pairs of decode steps, contexts of 1k to 32k cached tokens;
- `DECODE_BATCHES`: tokens of one decode step (one per sequence), 1 to 512;
- `image_tokens` / `IMAGES`: native ViT/CLIP token counts (patches + CLS: 197 = ViT-B/16 at 224 px,
  257 = CLIP-L/14 or DINOv2-L/14 at 224 px, 577 at 384 / 336 px, 1025 at 448 px) times images;
- `whisper_frames` / `CLIPS`: Whisper's encoder sees 1,500 frames per 30 s clip (3,000 mel frames).

`fit` picks, from an ascending list of candidates, the workloads whose size-based bytes (inputs +
outputs, as `solbench.spec.Problem.tensor_bytes` counts them, here from a draft's shapes:
`draft_bytes`) stay under a ceiling, so that the largest lands in the target range (at least 400 MB
where the op allows, at most about 16 GB). `tiered` moves a draft's recipe workloads to its CPU tier
and sets the GPU ones.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from solbench.suite.draft import ProblemDraft

MB = 10**6
GB = 10**9
TARGET_LOW = 400 * MB
"""The largest GPU-tier workload of a typical problem moves at least this much (issue 13's target)."""
TARGET_HIGH = 16 * GB
"""No GPU-tier workload moves more (the evaluator keeps golden copies; an H200 has 141 GB)."""
GPU_COUNT = 16
"""Workloads per problem in the GPU tier."""

TRAIN_TOKENS = (1, 16, 128, 1000, 1024, 2048, 3000, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536)
"""Flattened training / prefill token counts, 1k-64k, with small and odd sizes mixed in."""
LONG_TOKENS = (1024, 1536, 2048, 3000, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 32768, 40960, 49152, 65536)
"""1k-64k only, denser: for ops whose small sizes say nothing (or that `fit` trims from the top)."""
WIDE_TOKENS = (1, 4, 16, 64, 128, 256, 512, 1000, 1024, 2048, 3000, 4096, 8192, 16384, 32768, 65536)
"""1 to 64k, spread evenly in log scale: for ops with wide rows (vocabulary, big weights) that `fit` trims."""
DECODE_BATCHES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
"""Tokens in one decode step (one per sequence)."""
PREFILL_SEQUENCES = (
    (1, 1024),
    (1, 2000),
    (2, 1024),
    (1, 4096),
    (4, 1024),
    (2, 4096),
    (1, 8192),
    (8, 1024),
    (4, 4096),
    (3, 8192),
    (1, 16384),
    (8, 4096),
    (4, 8192),
    (2, 16384),
    (1, 32768),
    (8, 8192),
)
"""(batch, tokens per sequence): 1k to 64k tokens in all."""
DECODE_CONTEXTS = (
    (1, 1024),
    (1, 4096),
    (1, 8192),
    (1, 32768),
    (4, 2048),
    (4, 8192),
    (8, 1024),
    (8, 4096),
    (8, 16384),
    (16, 2048),
    (16, 8192),
    (32, 1024),
    (32, 4096),
    (64, 2048),
    (64, 8192),
    (128, 4096),
)
"""(batch, context length) of a decode step: contexts of 1k to 32k cached tokens."""
CHUNKED_SEQUENCES = (
    (1, 1024),
    (1, 2048),
    (2, 1024),
    (1, 4096),
    (4, 1024),
    (2, 4096),
    (1, 8192),
    (8, 1024),
    (4, 4096),
    (2, 8192),
    (1, 16384),
    (8, 4096),
    (4, 8192),
    (2, 16384),
    (1, 32768),
    (8, 8192),
)
"""(batch, tokens per sequence) with every length a multiple of 256: whole chunks of chunked scans."""
VOCAB_ROWS = (1, 2, 4, 8, 16, 32, 64, 100, 128, 256, 500, 512, 1000, 1024, 2048, 4096)
"""Logit rows of a sampling step: one per sequence of a decode batch, up to 4,096 (512 sequences with 8
speculative tokens each, or a prefill's chunk); for ops over the whole vocabulary (about 0.5-1 MB a row)."""
VOCAB_TRAIN_TOKENS = (1, 16, 128, 256, 500, 512, 1000, 1024, 2000, 2048, 3000, 4096, 6144, 8192, 12288, 16384)
"""Tokens of a training chunk for losses over the vocabulary (the logits of a whole 64k batch would take
tens of GB, so trainers chunk them)."""
BATCHES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
"""Images, clips or samples of a batch where each one is large (1,024 px images, whole videos)."""
IMAGE_SIZES = {"vit_b16_224": 197, "vit_b16_384": 577, "clip_l14_224": 257, "clip_l14_336": 577, "vit_l14_448": 1025}
"""Tokens per image (patches + CLS) at native resolutions."""
IMAGES = (1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
"""Images per batch (inference to training batches)."""
WHISPER_FRAMES_PER_CLIP = 1500
"""Whisper encoder frames per 30 s clip (max_source_positions); 3,000 log-mel frames before the stride-2 conv."""
CLIPS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
"""30 s audio clips per batch."""


def image_tokens(
    per_image: Sequence[int] = (197, 577), images: Sequence[int] = IMAGES, count: int = GPU_COUNT
) -> list[tuple[int, int]]:
    """(images, tokens per image) pairs, every native size in `per_image` crossed with the image counts,
    `count` of them spread from the smallest to the largest product (distinct)."""
    return crossed(images, per_image, count)


def crossed(
    first: Sequence[int],
    second: Sequence[int],
    count: int = GPU_COUNT,
    weight: Callable[[int, int], float] = lambda a, b: a * b,
) -> list[tuple[int, int]]:
    """`count` (a, b) pairs of `first` x `second`, spread from the smallest to the largest `weight`
    (default a x b: images x tokens per image, clips x samples)."""
    pairs = sorted({(a, b) for a in first for b in second}, key=lambda p: (weight(*p), p[1]))
    return spread(pairs, count)


def whisper_frames(clips: Sequence[int] = CLIPS) -> list[int]:
    """Encoder frames of whole 30 s clips: 1,500 x clips."""
    return [WHISPER_FRAMES_PER_CLIP * c for c in clips]


def spread(values: Sequence, count: int = GPU_COUNT) -> list:
    """`count` of `values` (ascending), evenly spaced by index, always keeping the first and the last."""
    values = list(values)
    if len(values) <= count:
        return values
    picks = sorted({round(i * (len(values) - 1) / (count - 1)) for i in range(count)})
    return [values[i] for i in picks]


def geometric(low: int, high: int, count: int = GPU_COUNT, *, multiple: int = 1) -> list[int]:
    """`count` distinct values from `low` to `high`, spaced evenly in log scale, each a multiple of
    `multiple` (for axes that must stay whole chunks or pages)."""
    out: list[int] = []
    for i in range(count):
        value = low * (high / low) ** (i / max(count - 1, 1))
        value = max(multiple, round(value / multiple) * multiple)
        while out and value <= out[-1]:
            value += multiple
        out.append(value)
    return out


def draft_bytes(draft: ProblemDraft, axes: dict[str, int]) -> int:
    """Size-based bytes of one workload of `draft` (every input and output tensor, as
    `Problem.tensor_bytes` counts them in a written folder)."""
    return _sizer(draft)(axes)


def fit(
    candidates: Iterable[dict[str, int]],
    size_of: Callable[[dict[str, int]], int] | ProblemDraft,
    *,
    count: int = GPU_COUNT,
    high: int = TARGET_HIGH,
) -> list[dict[str, int]]:
    """`count` workloads from ascending `candidates` whose size (bytes, `size_of(axes)`, or a draft's
    size-based bytes) stays at most `high`, spread over the sizes and keeping the largest that fits, so
    the largest workload lands as close under `high` as the candidates allow. Raises ValueError when
    fewer than `count` fit."""
    if isinstance(size_of, ProblemDraft):
        size_of = _sizer(size_of)
    fitting = [dict(c) for c in candidates if size_of(c) <= high]
    if len(fitting) < count:
        raise ValueError(f"only {len(fitting)} of the candidates stay under {high / GB:.1f} GB (need {count})")
    return spread(fitting, count)


def tokens_upto(
    size_of: Callable[[dict[str, int]], int] | ProblemDraft,
    axis: str = "num_tokens",
    *,
    low: int = TARGET_LOW,
    high: int = TARGET_HIGH,
    start: int = 1,
    multiple: int = 1,
    limit: int = 1 << 20,
    count: int = GPU_COUNT,
) -> list[dict[str, int]]:
    """`count` values of one axis, spaced geometrically from `start` up to the value whose workload
    first reaches `low` bytes (powers of two times `multiple`, at most `limit`), or the largest under
    `high` where reaching `low` would pass it. For ops whose per-token size the standard sweeps miss."""
    if isinstance(size_of, ProblemDraft):
        size_of = _sizer(size_of)
    top = multiple
    while top * 2 <= limit and size_of({axis: top}) < low and size_of({axis: top * 2}) <= high:
        top *= 2
    top = max(top, start * count, multiple * count)
    return [{axis: v} for v in geometric(max(start, 1), top, count, multiple=multiple)]


def _sizer(draft: ProblemDraft) -> Callable[[dict[str, int]], int]:
    from solbench.spec.definition import Definition
    from solbench.spec.problem import Problem

    problem = Problem(root=Path("."), definition=Definition.model_validate(draft.definition()), workloads=())
    return lambda axes: problem.tensor_bytes(dict(axes))


def largest_bytes(draft: ProblemDraft) -> int:
    """Size-based bytes of the draft's largest GPU-tier workload."""
    size = _sizer(draft)
    return max(size(w) for w in draft.workloads)


def tiered(
    draft: ProblemDraft,
    gpu: Iterable[dict[str, int]],
    *,
    min_count: int = GPU_COUNT,
    high: int = TARGET_HIGH,
    shift: str = "smallest",
    keep: Sequence[str] = (),
    steps: dict[str, int] | None = None,
    **changes,
) -> ProblemDraft:
    """The draft with `gpu` as its GPU tier (workload.jsonl) and its recipe workloads moved to the CPU
    tier (workload.cpu.jsonl); `changes` are further dataclass fields to replace (set, extra_tags).

    The GPU tier must hold at least `min_count` distinct workloads naming the same axes as the recipe's,
    none over `high` bytes (0: no check). A CPU workload that the GPU tier also has is moved (`disjoint`, by
    `shift`; `keep`: axes never moved, `steps`: granularity of an axis where the gcd of its values is too
    coarse), or with `shift="none"` kept as the recipe made it (where moving it would break a constraint such
    as whole 128-token groups; validate compares workloads within a tier)."""
    gpu = [dict(w) for w in gpu]
    if len({workload_key(w) for w in gpu}) != len(gpu):
        raise ValueError(f"{draft.name}: duplicate GPU-tier workload")
    if len(gpu) < min_count:
        raise ValueError(f"{draft.name}: {len(gpu)} GPU-tier workloads, needs at least {min_count}")
    cpu = draft.cpu_workloads if draft.cpu_workloads is not None else draft.workloads
    names, cpu_names = {tuple(sorted(w)) for w in gpu}, {tuple(sorted(w)) for w in cpu}
    if names != cpu_names:
        raise ValueError(f"{draft.name}: GPU-tier axes {sorted(names)} differ from the CPU tier's {sorted(cpu_names)}")
    size = _sizer(draft)
    if shift != "none":
        cpu = disjoint(cpu, gpu, size=size if shift == "smallest" else None, keep=keep, steps=steps)
    out = dataclasses.replace(draft, workloads=gpu, cpu_workloads=cpu, **changes)
    if high:
        for w in gpu:
            if size(w) > high:
                raise ValueError(f"{draft.name}: GPU workload {w} moves {size(w) / GB:.1f} GB, over {high / GB:.0f} GB")
    return out


def workload_key(workload: dict[str, int]) -> tuple:
    """A workload's axes as a hashable key: two workloads with the same key are one."""
    return tuple(sorted(workload.items()))


_BATCH_AXES = ("batch_size", "batch", "num_images", "images")


def disjoint(
    cpu: list[dict[str, int]],
    gpu: list[dict[str, int]],
    size: Callable[[dict[str, int]], int] | None = None,
    keep: Sequence[str] = (),
    steps: dict[str, int] | None = None,
) -> list[dict[str, int]]:
    """The CPU tier without the GPU tier's axis values.

    Without `size`, a CPU workload the GPU tier also has gets its batch (or first) axis raised by one
    until it is new. With `size`, it moves to the smallest free neighbour: one axis up or down by that
    axis's granularity (the gcd of its values in both tiers, so whole chunks stay whole), batch axes
    first where sizes tie; a CPU workload stays about as cheap as the recipe made it. Axes in `keep`
    (channels that must stay a real stage's) never move; `steps` overrides an axis's granularity."""
    taken = {workload_key(w) for w in gpu}
    steps = {
        **{axis: math.gcd(*(w[axis] for w in (*cpu, *gpu) if axis in w)) for w in cpu for axis in w},
        **(steps or {}),
    }
    out = []
    for workload in cpu:
        workload = dict(workload)
        if workload_key(workload) in taken and size is None:
            axis = next((a for a in _BATCH_AXES if a in workload), next(iter(workload)))
            while workload_key(workload) in taken:
                workload[axis] += 1
        elif workload_key(workload) in taken:
            options = []
            for axis, value in workload.items():
                if axis in keep:
                    continue
                for direction in (1, -1):
                    moved = value + direction * steps[axis]
                    while moved >= 1 and workload_key({**workload, axis: moved}) in taken:
                        moved += direction * steps[axis]
                    if moved >= 1:
                        options.append(
                            (
                                size({**workload, axis: moved}),
                                axis not in _BATCH_AXES,
                                direction < 0,
                                {**workload, axis: moved},
                            )
                        )
            workload = min(options, key=lambda o: o[:3])[3]
        taken.add(workload_key(workload))
        out.append(workload)
    return out


def pairs(first: str, second: str, values: Iterable[tuple[int, int]]) -> list[dict[str, int]]:
    return [{first: a, second: b} for a, b in values]


def per(axis: str, values: Iterable[int]) -> list[dict[str, int]]:
    return [{axis: v} for v in values]


def with_gpu_tier(draft: ProblemDraft, gpu: Iterable[dict[str, int]], **changes) -> ProblemDraft:
    """`tiered` with the recipe's workloads kept as the CPU tier as they are (the Quant, FIB and DLRM recipes,
    whose small sizes respect constraints such as whole 128-token groups)."""
    return tiered(draft, gpu, shift="none", **changes)
