import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['num_experts'])
    dt = torch.float32
    out['router_logits'] = ((lambda t: t.index_put_((torch.arange(shape[0], device=device), torch.randint(0, a['local_experts'], (shape[0],), device=device)), torch.full((shape[0],), 4.0, device=device), accumulate=True))(torch.randn(shape, device=device))).to(dt)
    shape = (a['local_experts'], a['moe_intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['w_gate'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['local_experts'], a['moe_intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['w_up'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['local_experts'], a['hidden_size'], a['moe_intermediate_size'])
    dt = torch.bfloat16
    out['w_down'] = (torch.randn(shape, device=device) * 0.026650089544451305).to(dt)
    shape = (a['shared_intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['shared_gate'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['shared_intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['shared_up'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['hidden_size'], a['shared_intermediate_size'])
    dt = torch.bfloat16
    out['shared_down'] = (torch.randn(shape, device=device) * 0.018844459036110227).to(dt)
    return out



def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _rmsnorm(x, weight, eps):
    xf = x.to(_acc(x))
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_tables(seq_len, dim, theta, ref):
    """cos/sin [seq_len, dim] for positions 0..seq_len-1 (Hugging Face layout: halves repeated)."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = torch.arange(seq_len, device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)


@torch.no_grad()
def run(hidden_states, router_logits, w_gate, w_up, w_down, shared_gate, shared_up, shared_down):
    acc = _acc(hidden_states)
    probs = torch.softmax(router_logits.to(acc), dim=-1)
    topk_weight, topk_index = torch.topk(probs, 6, dim=-1)
    topk_weight = topk_weight * 1.0
    out = torch.zeros(hidden_states.shape, device=hidden_states.device, dtype=acc)
    for e in range(w_gate.shape[0]):  # the experts this expert-parallel rank holds: global ids 0..E_local-1
        token, slot = torch.where(topk_index == e)
        x = hidden_states[token]
        h = F.silu(F.linear(x, w_gate[e])) * F.linear(x, w_up[e])
        y = F.linear(h, w_down[e])
        out.index_add_(0, token, y.to(acc) * topk_weight[token, slot, None])
    shared = F.linear(F.silu(F.linear(hidden_states, shared_gate)) * F.linear(hidden_states, shared_up), shared_down)
    out = out + shared.to(acc)
    return out.to(hidden_states.dtype)
