"""Speech and audio encoders at their native lengths: 30-second clips, several per batch.

Every problem takes its dimensions from a record of ``src/solbench/suite/data/model-configs.json`` and
follows the model's code:

- Whisper medium: the encoder self-attention sublayer of ``WhisperEncoderLayer`` (transformers
  ``modeling_whisper.py``: pre-LN, k_proj without bias) at max_source_positions 1,500 frames;
- HuBERT Large: ``HubertFeatureEncoder`` with ``feat_extract_norm="layer"`` (``HubertLayerNormConvLayer``:
  conv, LayerNorm over channels, GELU; 7 strided convs, 320x downsampling); HuBERT X-Large: the attention half
  of ``HubertEncoderLayerStableLayerNorm`` (layer_norm_first);
- wav2vec 2.0 Large LV-60: ``Wav2Vec2PositionalConvEmbedding`` (weight-normed grouped conv, ``Wav2Vec2SamePadLayer``,
  GELU) added to the features as ``Wav2Vec2EncoderStableLayerNorm.forward`` does (no LayerNorm there in the
  stable-layer-norm variant);
- FastConformer Large: NeMo ``ConvSubsampling`` with ``subsampling="dw_striding"`` (nemo/collections/asr/parts/
  submodules/subsampling.py: conv 3x3 stride 2, then (depthwise 3x3 stride 2 + pointwise 1x1 + ReLU) x 2, Linear);
- EnCodec 24 kHz: ``ResidualVectorQuantization.encode`` with ``EuclideanCodebook.quantize`` (encodec repo,
  quantization/core_vq.py): nearest codeword by -(|x|^2 - 2 x.e + |e|^2), residual subtracted, 32 codebooks.

Two tiers (docs/tiers.md): 16 GPU-scale workloads of 30-second clips (and long-form audio where the model
takes it), and 8 small CPU-tier ones.
"""

from __future__ import annotations

from suite_recipes.builder import slug
from suite_recipes.l2 import draft
from suite_recipes.models import model
from suite_recipes.vision_language import two_tiers
from solbench.suite.draft import ProblemDraft

WHISPER_MEDIUM = model("Whisper medium", "openai/whisper-medium", "speech",
                       {"d_model": 1024, "encoder_attention_heads": 16, "max_source_positions": 1500})
HUBERT_LARGE = model("HuBERT Large (LL-60k)", "facebook/hubert-large-ll60k", "speech",
                     {"conv_dim": [512, 512, 512, 512, 512, 512, 512], "conv_kernel": [10, 3, 3, 3, 3, 2, 2],
                      "conv_stride": [5, 2, 2, 2, 2, 2, 2], "feat_extract_norm": "layer", "conv_bias": True,
                      "layer_norm_eps": 1e-05})
HUBERT_XLARGE = model("HuBERT X-Large (LL-60k)", "facebook/hubert-xlarge-ll60k", "speech",
                      {"encoder_embed_dim": 1280, "encoder_attention_heads": 16, "layer_norm_first": True})
WAV2VEC2_LARGE = model("wav2vec 2.0 Large LV-60 self-training (960h)", "facebook/wav2vec2-large-960h-lv60-self",
                       "speech", {"hidden_size": 1024, "num_conv_pos_embeddings": 128,
                                  "num_conv_pos_embedding_groups": 16, "do_stable_layer_norm": True})
FASTCONFORMER_L = model("FastConformer Large (~120M) encoder", None, "speech",
                        {"subsampling": "dw_striding", "subsampling_factor": 8, "subsampling_conv_channels": 256,
                         "feat_in": 80, "d_model": 512, "window_stride": 0.01})
ENCODEC_24K = model("EnCodec 24 kHz", "facebook/encodec_24khz", "speech",
                    {"hidden_size": 128, "codebook_size": 1024, "sampling_rate": 24000,
                     "derived.hop_length": 320, "derived.num_quantizers_at_24kbps": 32})

CLIP_BATCHES = (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80)
"""30-second clips per batch."""


def _clips(axis: str, length: int, batches=CLIP_BATCHES):
    return [{"batch_size": b, axis: length} for b in batches]


def _pairs(axis: str, pairs):
    return [{"batch_size": b, axis: n} for b, n in pairs]


# ================================ attention sublayers ===========================================================

_ENC_ATTN = '''@torch.no_grad()
def run(hidden_states, ln_weight, ln_bias, q_proj, q_bias, k_proj, @KBIAS_ARG@v_proj, v_bias, out_proj, out_bias):
    b, t, d = hidden_states.shape
    heads = @HEADS@
    x = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-05)
    q = F.linear(x, q_proj, q_bias).view(b, t, heads, -1).transpose(1, 2)
    k = F.linear(x, k_proj@KBIAS@).view(b, t, heads, -1).transpose(1, 2)
    v = F.linear(x, v_proj, v_bias).view(b, t, heads, -1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
    return hidden_states + F.linear(o, out_proj, out_bias)
'''


def _encoder_attention(m, name: str, d: int, heads: int, frames: int, k_bias: bool, what: str) -> ProblemDraft:
    inputs = {"hidden_states": (["batch_size", "num_frames", "d_model"], "bfloat16", 1.0),
              "ln_weight": (["d_model"], "bfloat16", 0.1, 1.0), "ln_bias": (["d_model"], "bfloat16", 0.1),
              "q_proj": (["d_model", "d_model"], "bfloat16", 2 * d ** -0.5), "q_bias": (["d_model"], "bfloat16", 0.1),
              "k_proj": (["d_model", "d_model"], "bfloat16", 2 * d ** -0.5)}
    if k_bias:
        inputs["k_bias"] = (["d_model"], "bfloat16", 0.1)
    inputs.update({"v_proj": (["d_model", "d_model"], "bfloat16", d ** -0.5), "v_bias": (["d_model"], "bfloat16", 0.1),
                   "out_proj": (["d_model", "d_model"], "bfloat16", d ** -0.5),
                   "out_bias": (["d_model"], "bfloat16", 0.1)})
    src = _ENC_ATTN.replace("@KBIAS_ARG@", "k_bias, " if k_bias else "").replace("@KBIAS@", ", k_bias" if k_bias else "")
    d0 = draft(m, name, "encoder_attention", what,
               {"batch_size": (None, "30-second clips"), "num_frames": (None, f"encoder frames ({frames} per 30 s)"),
                "d_model": (d, "model width")},
               inputs, {"output": (["batch_size", "num_frames", "d_model"], "bfloat16")}, src,
               _clips("num_frames", frames), subs={"HEADS": heads})
    cpu = _pairs("num_frames", ((1, 10), (2, 10), (1, 50), (4, 25), (1, 100), (2, 75), (1, 150), (3, 40)))
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="encoder_attention")


def whisper_encoder_attention(m) -> ProblemDraft:
    d, heads, frames = m.config["d_model"], m.config["encoder_attention_heads"], m.config["max_source_positions"]
    return _encoder_attention(
        m, f"{slug(m)}_encoder_self_attention_d{d}_h{heads}", d, heads, frames, False,
        f"{m.name} encoder self-attention sublayer (WhisperEncoderLayer, pre-LN): x + out_proj(MHA(LayerNorm(x))) "
        f"over max_source_positions {frames} frames of a 30-second clip, d_model {d}, encoder_attention_heads "
        f"{heads}, bidirectional; q/v/out projections with bias, k_proj without (as Whisper).")


def hubert_xlarge_attention(m) -> ProblemDraft:
    d, heads = m.config["encoder_embed_dim"], m.config["encoder_attention_heads"]
    return _encoder_attention(
        m, f"{slug(m)}_encoder_self_attention_d{d}_h{heads}", d, heads, 1499, False,
        f"{m.name} transformer layer attention half with the layer norm first (layer_norm_first: "
        f"HubertEncoderLayerStableLayerNorm): x + out_proj(MHA(LayerNorm(x))), encoder_embed_dim {d}, "
        f"encoder_attention_heads {heads} (head_dim {d // heads}), q/v/out with bias, over the 1,499 feature "
        "frames (20 ms) of a 30-second 16 kHz clip; LayerNorm eps 1e-5. The model's k_proj bias is left out: it "
        "adds the same q.b_k to every score of a query, which the softmax cancels.")


# ================================ conv feature encoder and positional conv =====================================


def _conv_out(expr: str, kernel: int, stride: int) -> str:
    return f"(({expr}) - {kernel}) // {stride} + 1"


def hubert_feature_encoder(m) -> ProblemDraft:
    dims, kernels, strides = m.config["conv_dim"], m.config["conv_kernel"], m.config["conv_stride"]
    eps = m.config["layer_norm_eps"]
    names, inputs, axes = [], {"input_values": (["batch_size", "num_samples"], "float32", 1.0)}, {}
    frames = "num_samples"
    axes = {"batch_size": (None, "clips"), "num_samples": (None, "16 kHz samples (480,000 per 30 s)")}
    fan_in = 1
    for i, (c, k, s) in enumerate(zip(dims, kernels, strides)):
        axes[f"k{i}"] = (k, f"conv_kernel[{i}]")
        axes[f"c{i}"] = (c, f"conv_dim[{i}]")
        inputs[f"conv{i}_weight"] = ([f"c{i}", "in1" if i == 0 else f"c{i - 1}", f"k{i}"], "float32",
                                     (fan_in * k) ** -0.5)
        inputs[f"conv{i}_bias"] = ([f"c{i}"], "float32", 0.1)
        inputs[f"ln{i}_weight"] = ([f"c{i}"], "float32", 0.1, 1.0)
        inputs[f"ln{i}_bias"] = ([f"c{i}"], "float32", 0.1)
        names += [f"conv{i}_weight", f"conv{i}_bias", f"ln{i}_weight", f"ln{i}_bias"]
        fan_in = c
        frames = _conv_out(frames, k, s)
    axes["in1"] = (1, "mono waveform")
    axes["num_frames"] = (frames, "frames after the 7 strided convs (20 ms each)")
    lines = [f"@torch.no_grad()\ndef run(input_values, {', '.join(names)}):", "    x = input_values[:, None]"]
    for i, s in enumerate(strides):
        lines.append(f"    x = F.conv1d(x, conv{i}_weight, conv{i}_bias, stride={s})")
        lines.append(f"    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln{i}_weight, ln{i}_bias, {eps})"
                     ".transpose(1, 2))")
    lines.append("    return x")
    gpu = _clips("num_samples", 480000, (1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48))
    cpu = _pairs("num_samples", ((1, 400), (2, 400), (1, 1600), (1, 3200), (2, 1600), (1, 4000), (3, 800), (1, 8000)))
    d0 = draft(
        m, f"{slug(m)}_conv_feature_encoder_c{dims[0]}", "conv_feature_encoder",
        f"{m.name} convolutional feature encoder (HubertFeatureEncoder, feat_extract_norm layer): 7 conv1d layers "
        f"(conv_dim {dims}, conv_kernel {kernels}, conv_stride {strides}, conv_bias) on the raw 16 kHz waveform, each "
        f"followed by LayerNorm over the channels (eps {eps}) and GELU, 320x downsampling to 20 ms frames "
        "(1,499 per 30-second clip). The wav2vec2-base-style group-norm first layer is feat_extract_norm group; this "
        "model uses layer norm in every layer. fp32.",
        axes, inputs, {"features": (["batch_size", f"c{len(dims) - 1}", "num_frames"], "float32")},
        "\n".join(lines) + "\n", gpu)
    return two_tiers(d0, "L2", [], cpu, kernel="conv_feature_encoder")


_POS_CONV = '''@torch.no_grad()
def run(hidden_states, weight_v, weight_g, conv_bias):
    # weight_norm(dim=2): one norm per kernel tap over (out, in) channels
    weight = weight_v * (weight_g / weight_v.pow(2).sum(dim=(0, 1), keepdim=True).sqrt())
    h = F.conv1d(hidden_states.transpose(1, 2), weight, conv_bias, padding=@PAD@, groups=@GROUPS@)
    h = F.gelu(h[:, :, :-1]).transpose(1, 2)
    return hidden_states + h
'''


def wav2vec2_pos_conv(m) -> ProblemDraft:
    d, k, g = m.config["hidden_size"], m.config["num_conv_pos_embeddings"], m.config["num_conv_pos_embedding_groups"]
    gpu = _clips("num_frames", 1499, (1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40))
    cpu = _pairs("num_frames", ((1, 10), (2, 10), (1, 50), (4, 25), (1, 100), (2, 75), (1, 150), (3, 40)))
    d0 = draft(
        m, f"{slug(m)}_pos_conv_embedding_d{d}_k{k}_g{g}", "pos_conv_embedding",
        f"{m.name} convolutional relative positional embedding added to the projected features "
        f"(Wav2Vec2PositionalConvEmbedding inside Wav2Vec2EncoderStableLayerNorm, do_stable_layer_norm): "
        f"weight-normed (dim 2) grouped conv1d, kernel num_conv_pos_embeddings {k}, num_conv_pos_embedding_groups {g}, "
        f"padding {k // 2} and the last frame dropped (even kernel, Wav2Vec2SamePadLayer), GELU, added to x; no "
        f"LayerNorm here in the stable-layer-norm variant. hidden_size {d}, 1,499 frames per 30-second clip. fp32.",
        {"batch_size": (None, "clips"), "num_frames": (None, "20 ms frames (1,499 per 30 s)"),
         "hidden_size": (d, "hidden_size"), "group_channels": (d // g, "hidden_size / groups"),
         "kernel": (k, "num_conv_pos_embeddings"), "one": (1, "weight_g broadcast dims")},
        {"hidden_states": (["batch_size", "num_frames", "hidden_size"], "float32", 1.0),
         "weight_v": (["hidden_size", "group_channels", "kernel"], "float32", 1.0),
         "weight_g": (["one", "one", "kernel"], "float32", "torch.rand(shape, device=device) * 0.5 + 0.5"),
         "conv_bias": (["hidden_size"], "float32", 0.1)},
        {"output": (["batch_size", "num_frames", "hidden_size"], "float32")}, _POS_CONV, gpu,
        subs={"PAD": k // 2, "GROUPS": g})
    return two_tiers(d0, "L2", [], cpu, kernel="pos_conv_embedding")


_DW_STRIDING = '''@torch.no_grad()
def run(audio_signal, conv0_weight, conv0_bias, dw1_weight, dw1_bias, pw1_weight, pw1_bias, dw2_weight, dw2_bias,
        pw2_weight, pw2_bias, out_weight, out_bias):
    channels = conv0_weight.shape[0]
    x = F.relu(F.conv2d(audio_signal[:, None], conv0_weight, conv0_bias, stride=2, padding=1))
    x = F.conv2d(x, dw1_weight, dw1_bias, stride=2, padding=1, groups=channels)
    x = F.relu(F.conv2d(x, pw1_weight, pw1_bias))
    x = F.conv2d(x, dw2_weight, dw2_bias, stride=2, padding=1, groups=channels)
    x = F.relu(F.conv2d(x, pw2_weight, pw2_bias))
    b, c, t, f = x.shape
    return F.linear(x.transpose(1, 2).reshape(b, t, c * f), out_weight, out_bias)
'''


def fastconformer_subsampling(m) -> ProblemDraft:
    c, feat, d = m.config["subsampling_conv_channels"], m.config["feat_in"], m.config["d_model"]
    factor = m.config["subsampling_factor"]
    out_feat = feat // factor
    frames = "num_frames"
    for _ in range(3):
        frames = f"(({frames}) - 1) // 2 + 1"
    gpu = _clips("num_frames", 3000, (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128)) + \
        [{"batch_size": 1, "num_frames": n} for n in (12000, 36000, 72000, 120000)]
    cpu = _pairs("num_frames", ((1, 16), (2, 16), (1, 64), (1, 100), (2, 64), (1, 200), (3, 40), (1, 400)))
    d0 = draft(
        m, f"{slug(m)}_dw_striding_subsampling_c{c}_d{d}", "conv_subsampling",
        f"{m.name} input subsampling (NeMo ConvSubsampling, subsampling dw_striding, subsampling_factor {factor}): "
        f"log-mel features (feat_in {feat}, window_stride 10 ms) as a 1-channel image, conv2d 3x3 stride 2 to "
        f"subsampling_conv_channels {c} + ReLU, then twice (depthwise 3x3 stride 2 + pointwise 1x1 + ReLU), "
        f"flattened channels x {out_feat} frequencies and Linear -> d_model {d}: 3,000 frames per 30-second clip "
        "become 375 (80 ms). Long-form audio up to 20 minutes in one sequence. fp32.",
        {"batch_size": (None, "clips"), "num_frames": (None, "10 ms mel frames"),
         "out_frames": (frames, "frames after three stride-2 convs"), "feat_in": (feat, "feat_in"),
         "channels": (c, "subsampling_conv_channels"), "one": (1, "input channel / depthwise group width"),
         "k3": (3, "kernel_size"), "k1": (1, "pointwise"), "flat": (c * out_feat, "channels x feat_in / 8"),
         "d_model": (d, "d_model")},
        {"audio_signal": (["batch_size", "num_frames", "feat_in"], "float32", 1.0),
         "conv0_weight": (["channels", "one", "k3", "k3"], "float32", 9 ** -0.5),
         "conv0_bias": (["channels"], "float32", 0.1),
         "dw1_weight": (["channels", "one", "k3", "k3"], "float32", 9 ** -0.5),
         "dw1_bias": (["channels"], "float32", 0.1),
         "pw1_weight": (["channels", "channels", "k1", "k1"], "float32", c ** -0.5),
         "pw1_bias": (["channels"], "float32", 0.1),
         "dw2_weight": (["channels", "one", "k3", "k3"], "float32", 9 ** -0.5),
         "dw2_bias": (["channels"], "float32", 0.1),
         "pw2_weight": (["channels", "channels", "k1", "k1"], "float32", c ** -0.5),
         "pw2_bias": (["channels"], "float32", 0.1),
         "out_weight": (["d_model", "flat"], "float32", (c * out_feat) ** -0.5),
         "out_bias": (["d_model"], "float32", 0.1)},
        {"output": (["batch_size", "out_frames", "d_model"], "float32")}, _DW_STRIDING, gpu)
    return two_tiers(d0, "L2", [], cpu, kernel="conv_subsampling")


# ================================ EnCodec residual vector quantiser ============================================

_RVQ = '''

def _rvq_example(a, out, device):
    """Encoder outputs that lie near codewords: x = sum_q codebook_q[c_q] with codebook q scaled by 0.7^q, so every
    stage's nearest codeword is separated from the next by a wide margin (no near-ties: the codes are
    well-defined whatever the summation order), plus noise far below the last stage's scale."""
    nq, bins, dim = a["num_quantizers"], a["codebook_size"], a["dim"]
    scale = 0.7 ** torch.arange(nq, device=device, dtype=torch.float32)
    books = torch.randn(nq, bins, dim, device=device) * scale[:, None, None]
    codes = torch.randint(0, bins, (nq, a["batch_size"] * a["num_frames"]), device=device)
    x = torch.zeros(a["batch_size"] * a["num_frames"], dim, device=device)
    for q in range(nq):
        x += books[q][codes[q]]
    x += torch.randn_like(x) * 1e-8
    out["_codebooks"] = books
    return x.view(a["batch_size"], a["num_frames"], dim).permute(0, 2, 1).contiguous()


@torch.no_grad()
def run(x, codebooks):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    b, dim, t = x.shape
    residual = x.to(acc).permute(0, 2, 1).reshape(-1, dim)
    codes = []
    for embed in codebooks.to(acc):
        dist = -(residual.pow(2).sum(1, keepdim=True) - 2 * residual @ embed.t() + embed.pow(2).sum(1)[None, :])
        index = dist.max(dim=-1).indices
        residual = residual - embed[index]
        codes.append(index.view(b, t))
    return torch.stack(codes)
'''


def encodec_rvq_encode(m) -> ProblemDraft:
    dim, bins, nq = m.config["hidden_size"], m.config["codebook_size"], m.config["derived.num_quantizers_at_24kbps"]
    rate, hop = m.config["sampling_rate"], m.config["derived.hop_length"]
    frames = 30 * rate // hop
    gpu = _clips("num_frames", frames, (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256))
    cpu = _pairs("num_frames", ((1, 4), (2, 4), (1, 16), (1, 30), (2, 20), (1, 50), (3, 10), (1, 75)))
    d0 = draft(
        m, f"{slug(m)}_rvq_encode_q{nq}_k{bins}_d{dim}", "residual_vq_encode",
        f"{m.name} residual vector quantiser, encode (ResidualVectorQuantization.encode with EuclideanCodebook): "
        f"for each of the {nq} codebooks used at 24 kbps (codebook_size {bins}, dimension hidden_size {dim}) in turn, "
        f"the nearest codeword of the residual by -(|r|^2 - 2 r.e + |e|^2) (argmax), then the residual minus that "
        f"codeword; returns the codes [num_quantizers, batch, frames]. {frames} frames per 30-second clip "
        f"(sampling_rate {rate} / hop_length {hop}). fp32; the inputs keep every choice far from a tie, so the codes "
        "must match exactly.",
        {"batch_size": (None, "clips"), "num_frames": (None, f"75 Hz frames ({frames} per 30 s)"),
         "dim": (dim, "hidden_size"), "num_quantizers": (nq, "derived.num_quantizers_at_24kbps"),
         "codebook_size": (bins, "codebook_size")},
        {"x": (["batch_size", "dim", "num_frames"], "float32", "_rvq_example(a, out, device)"),
         "codebooks": (["num_quantizers", "codebook_size", "dim"], "float32", "out.pop('_codebooks')")},
        {"codes": (["num_quantizers", "batch_size", "num_frames"], "int64")}, _RVQ, gpu)
    return two_tiers(d0, "L1", [], cpu, kernel="residual_vq")


def drafts() -> list[ProblemDraft]:
    return [
        whisper_encoder_attention(WHISPER_MEDIUM),
        hubert_feature_encoder(HUBERT_LARGE),
        hubert_xlarge_attention(HUBERT_XLARGE),
        wav2vec2_pos_conv(WAV2VEC2_LARGE),
        fastconformer_subsampling(FASTCONFORMER_L),
        encodec_rvq_encode(ENCODEC_24K),
    ]
