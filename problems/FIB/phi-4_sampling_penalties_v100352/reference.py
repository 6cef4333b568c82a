import torch


@torch.no_grad()
def run(logits, prompt_token_ids, output_token_ids, repetition_penalties, frequency_penalties, presence_penalties):
    """vLLM apply_penalties: repetition penalty on tokens seen in the prompt or output (divide positive
    logits, multiply negative ones), then frequency (per occurrence) and presence penalties on output tokens."""
    acc = (torch.float64 if logits.dtype == torch.float64 else torch.float32)
    x = logits.to(acc)
    counts = torch.zeros_like(x).scatter_add(1, output_token_ids.long(),
                                              torch.ones(output_token_ids.shape, dtype=acc, device=x.device))
    in_prompt = torch.zeros(x.shape, dtype=torch.bool, device=x.device).scatter(1, prompt_token_ids.long(), True)
    seen = in_prompt | (counts > 0)
    rep = repetition_penalties.to(acc).unsqueeze(-1)
    x = torch.where(seen, torch.where(x > 0, x / rep, x * rep), x)
    x = x - frequency_penalties.to(acc).unsqueeze(-1) * counts
    return x - presence_penalties.to(acc).unsqueeze(-1) * (counts > 0).to(acc)


def make_inputs(axes, device):
    b, v, lp, lo = axes["batch_size"], axes["vocab_size"], axes["prompt_len"], axes["output_len"]
    pool = torch.randint(0, v, (b, 512))        # text repeats itself: draw ids from a per-request pool
    prompt = torch.gather(pool, 1, torch.randint(0, 512, (b, lp)))
    output = torch.gather(pool, 1, torch.randint(0, 512, (b, lo)))
    return {"logits": (torch.randn(b, v) * 3.0).to(device), "prompt_token_ids": prompt.to(device),
            "output_token_ids": output.to(device),
            "repetition_penalties": torch.empty(b).uniform_(1.0, 1.5).to(device),
            "frequency_penalties": torch.empty(b).uniform_(0.0, 1.0).to(device),
            "presence_penalties": torch.empty(b).uniform_(0.0, 1.0).to(device)}
