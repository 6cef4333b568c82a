import torch

FINAL_LOGIT_SOFTCAPPING = 30.0


@torch.no_grad()
def run(logits, temperature):
    acc = (torch.float64 if logits.dtype == torch.float64 else torch.float32)
    x = torch.tanh(logits.to(acc) / FINAL_LOGIT_SOFTCAPPING) * FINAL_LOGIT_SOFTCAPPING
    return torch.log_softmax(x / temperature.to(acc).unsqueeze(-1), dim=-1)


def make_inputs(axes, device):
    b, v = axes["batch_size"], axes["vocab_size"]
    logits = torch.randn(b, v) * 6.0 + torch.randn(b, 1) * 4.0   # raw logits reach past the cap
    temperature = torch.empty(b).uniform_(0.3, 1.5)
    return {"logits": logits.to(device), "temperature": temperature.to(device)}
