"""Convolutions: ViT/SAM patch embeddings, VAE 3x3, ConvNeXt depthwise 7x7, speech conv1d, video conv3d patches."""

from __future__ import annotations

from suite_recipes.builder import const, expr, problem, slug, tensor, uses, var
from suite_recipes.sweeps import pairs, per

_CONV = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run({arguments}):
    return F.conv{dims}d({arguments}, stride={stride}, padding={padding}, groups={groups})
'''

_QWEN_VL_PATCH = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(pixel_patches, weight):
    # Conv3d whose kernel and stride are the whole patch: one GEMM over the flattened patches.
    return F.linear(pixel_patches.flatten(1), weight.flatten(1))
'''

_FRAME_PATCHES = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight, bias):
    # Conv3d with kernel = stride = (1, p, p) is one GEMM over the flattened patches of every frame.
    batch, channels, frames, height, width = x.shape
    p = weight.shape[-1]
    patches = x.view(batch, channels, frames, height // p, p, width // p, p).permute(0, 2, 3, 5, 1, 4, 6)
    tokens = F.linear(patches.reshape(batch, frames, height // p, width // p, -1), weight.flatten(1), bias)
    return tokens.permute(0, 4, 1, 2, 3)
'''


def _conv_reference(dims: int, bias: bool, stride, padding, groups: int = 1) -> str:
    arguments = "x, weight, bias" if bias else "x, weight"
    return _CONV.format(arguments=arguments, dims=dims, stride=stride, padding=padding, groups=groups)


def _weights(out_ch, in_ch, kernel, dtype, bias: bool) -> dict:
    inputs = {"weight": tensor([out_ch, in_ch, *kernel], dtype)}
    if bias:
        inputs["bias"] = tensor([out_ch], dtype)
    return inputs


def patch_embed(m, *, hidden_key: str, patch_key: str, size_key: str, dtype: str, dtype_source: str, images):
    m = uses(m, hidden_key, patch_key, size_key, *([dtype_source] if dtype_source in m.config else []))
    hidden, patch = m.config[hidden_key], m.config[patch_key]
    return problem("L1", m, f"{slug(m)}_patch_embed_p{patch}h{hidden}", "conv2d",
              f"{m.name} patch embedding: Conv2d(3, {hidden} ({hidden_key}), kernel = stride = {patch} "
              f"({patch_key})) with bias on RGB images; the model's native size is {m.config[size_key]} px "
              f"({size_key}), other sizes are the resolutions it is run or fine-tuned at; {dtype} ({dtype_source}).",
              axes={"batch_size": var("Images"), "image_size": var("Image height = width in pixels"),
                    "grid": expr(f"image_size // {patch}", "Patches per side"),
                    "hidden_size": const(hidden, hidden_key)},
              inputs={"x": tensor(["batch_size", 3, "image_size", "image_size"], dtype),
                      **_weights("hidden_size", 3, (patch, patch), dtype, True)},
              outputs={"output": tensor(["batch_size", "hidden_size", "grid", "grid"], dtype)},
              reference=_conv_reference(2, True, patch, 0), workloads=pairs("batch_size", "image_size", images))


def vae_conv3x3(m):
    m = uses(m, "ch", "ch_mult")
    stages = [(512, 32), (512, 48), (512, 64), (256, 96), (256, 128), (128, 128), (128, 192), (128, 256)]
    return problem("L1", m, f"{slug(m)}_conv3x3", "conv2d",
              f"{m.name} decoder ResnetBlock convolution: Conv2d(C, C, 3, padding 1) with bias, C from "
              f"ch x ch_mult ({m.config['ch']} x {m.config['ch_mult']}) at the decoder stages of 256..1,024 px images (non-square maps in the CPU tier), "
              "one image, fp32 (the SDXL VAE overflows in fp16).",
              axes={"channels": var("ch x ch_mult[stage]"), "height": var("Feature map size"),
                    "width": var("Feature map size")},
              inputs={"x": tensor([1, "channels", "height", "width"], "float32"),
                      **_weights("channels", "channels", (3, 3), "float32", True)},
              outputs={"output": tensor([1, "channels", "height", "width"], "float32")},
              reference=_conv_reference(2, True, 1, 1),
              workloads=[{"channels": c, "height": s, "width": s} for c, s in stages])


def convnext_depthwise(m):
    m = uses(m, "hidden_sizes", "dwconv_kernel_size")
    kernel = m.config["dwconv_kernel_size"]
    sizes = dict(zip(m.config["hidden_sizes"], (56, 28, 14, 7)))  # stage resolution of a 224 px image
    workloads = [{"batch_size": b, "channels": c, "height": sizes[c], "width": sizes[c]}
                 for b in (1, 2) for c in m.config["hidden_sizes"]]
    return problem("L1", m, f"{slug(m)}_dwconv{kernel}x{kernel}", "conv2d_depthwise",
              f"{m.name} block depthwise convolution: Conv2d(C, C, {kernel} (dwconv_kernel_size), padding "
              f"{kernel // 2}, groups=C) with bias, at each stage (hidden_sizes {m.config['hidden_sizes']}; "
              "56..7 px feature maps of 224 px images, batches of 1 to 256); fp32.",
              axes={"batch_size": var("Images"), "channels": var("hidden_sizes[stage]"),
                    "height": var("Stage feature map size"), "width": var("Stage feature map size")},
              inputs={"x": tensor(["batch_size", "channels", "height", "width"], "float32"),
                      **_weights("channels", 1, (kernel, kernel), "float32", True)},
              outputs={"output": tensor(["batch_size", "channels", "height", "width"], "float32")},
              reference=_conv_reference(2, True, 1, kernel // 2, groups="x.shape[1]"), workloads=workloads)


def conv1d(m, *, keys, name: str, what: str, in_ch, out_ch: int, kernel: int, stride: int, padding: int,
           groups: int, bias: bool, dtype: str, length: str, workloads):
    m = uses(m, *keys)
    out_len = f"(length + {2 * padding} - {kernel}) // {stride} + 1"
    return problem("L1", m, f"{slug(m)}_{name}", "conv1d",
              f"{m.name} {what}: Conv1d({in_ch}, {out_ch}, kernel {kernel}, stride {stride}, padding {padding}"
              f"{', groups ' + str(groups) if groups > 1 else ''}, {'with' if bias else 'no'} bias); {dtype}.",
              axes={"batch_size": var("Clips"), "length": var(length),
                    "out_length": expr(out_len, "Output frames")},
              inputs={"x": tensor(["batch_size", in_ch, "length"], dtype),
                      **_weights(out_ch, in_ch // groups, (kernel,), dtype, bias)},
              outputs={"output": tensor(["batch_size", out_ch, "out_length"], dtype)},
              reference=_conv_reference(1, bias, stride, padding, groups),
              workloads=pairs("batch_size", "length", workloads))


def video_patch_embed(m, *, hidden_key: str, in_key: str, dtype: str, dtype_source: str, what: str, latents):
    m = uses(m, hidden_key, in_key, "patch_size", *([dtype_source] if dtype_source in m.config else []))
    hidden, channels, patch = m.config[hidden_key], m.config[in_key], m.config["patch_size"]
    assert patch[0] == 1, "the reference flattens (1, p, p) patches"
    return problem("L1", m, f"{slug(m)}_patch_embed3d_h{hidden}", "conv3d",
              f"{m.name} video patch embedding: Conv3d({channels} ({in_key}), {hidden} ({hidden_key}), kernel = "
              f"stride = {patch} (patch_size)) with bias on VAE latents; {what}; {dtype} ({dtype_source}).",
              axes={"frames": var("Latent frames"), "height": var("Latent height"), "width": var("Latent width"),
                    "grid_h": expr(f"height // {patch[1]}", "Patch rows"),
                    "grid_w": expr(f"width // {patch[2]}", "Patch columns"),
                    "in_channels": const(channels, in_key), "hidden_size": const(hidden, hidden_key)},
              inputs={"x": tensor([1, "in_channels", "frames", "height", "width"], dtype),
                      **_weights("hidden_size", "in_channels", patch, dtype, True)},
              outputs={"output": tensor([1, "hidden_size", "frames", "grid_h", "grid_w"], dtype)},
              reference=_FRAME_PATCHES,
              workloads=[{"frames": f, "height": h, "width": w} for f, h, w in latents])


def qwen_vl_patch_embed(m):
    keys = ("vision_config.hidden_size", "vision_config.in_chans", "vision_config.patch_size",
            "vision_config.temporal_patch_size", "torch_dtype")
    m = uses(m, *keys)
    hidden, channels, patch, temporal, dtype = (m.config[k] for k in keys)
    patches = (16, 64, 256, 576, 1024, 1296, 1600, 2304)  # 112..672 px square images: (size / 14)^2
    return problem("L1", m, f"{slug(m)}_vision_patch_embed_h{hidden}", "gemm",
              f"{m.name} vision patch embedding: each patch of {temporal} (temporal_patch_size) x {patch} x {patch} "
              f"(patch_size) pixels of {channels} channels (in_chans) goes through Conv3d with kernel = stride = "
              f"({temporal}, {patch}, {patch}), no bias, to {hidden} (vision_config.hidden_size), as in "
              f"Qwen2_5_VisionPatchEmbed; patch counts of single images from 112 to 1,792 px, and batches of up to 6 large images; {dtype} (torch_dtype).",
              axes={"num_patches": var("Patches (images are resized to multiples of 28 px)"),
                    "in_chans": const(channels, "in_chans"), "temporal": const(temporal, "temporal_patch_size"),
                    "patch": const(patch, "patch_size"), "hidden_size": const(hidden, "hidden_size")},
              inputs={"pixel_patches": tensor(["num_patches", "in_chans", "temporal", "patch", "patch"], dtype),
                      "weight": tensor(["hidden_size", "in_chans", "temporal", "patch", "patch"], dtype)},
              outputs={"output": tensor(["num_patches", "hidden_size"], dtype)},
              reference=_QWEN_VL_PATCH, workloads=per("num_patches", patches))
