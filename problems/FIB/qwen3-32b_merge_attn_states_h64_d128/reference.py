import torch


@torch.no_grad()
def run(v_a, s_a, v_b, s_b):
    acc = (torch.float64 if v_a.dtype == torch.float64 else torch.float32)
    sa, sb = s_a.to(acc), s_b.to(acc)
    m = torch.maximum(sa, sb)
    wa, wb = torch.exp2(sa - m), torch.exp2(sb - m)
    total = wa + wb
    v = v_a.to(acc) * (wa / total).unsqueeze(-1) + v_b.to(acc) * (wb / total).unsqueeze(-1)
    return v.to(v_a.dtype), m + torch.log2(total)
