# PyTorch peer of bench_gpu_step: the same training step on the same GPU.
"""PyTorch peer of llmft's GPU training-step benchmark.

Builds a GPT2LMHeadModel or LlamaForCausalLM of the given shape on the GPU with f32
weights, runs each step under torch.autocast in the given 16-bit dtype (the usual mixed
precision: f32 masters, 16-bit compute, as llmft's bf16 run keeps f32 masters for AdamW),
scaled-dot-product (flash) attention, optional gradient checkpointing and a fused
torch.optim.AdamW, and times steps with CUDA events. Prints one JSON line:
{"ms_per_step", "tokens_per_s", "torch_version", "device"}.
"""

import argparse
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig,  # noqa: E402
                          LlamaForCausalLM)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--family", choices=["gpt2", "llama"], required=True)
    for name in ("vocab", "hidden", "layers", "heads", "kv-heads", "intermediate", "positions",
                 "batch", "seq", "steps", "warmup"):
        add("--" + name, type=int, required=True)
    add("--dtype", choices=["bf16", "fp16"], default="bf16")
    add("--checkpointing", type=int, default=0)
    add("--clip-grad", type=float, default=1.0)  # 0: no clipping
    return parser.parse_args()


def build_model(a):
    if a.family == "gpt2":
        config = GPT2Config(vocab_size=a.vocab, n_positions=a.positions, n_embd=a.hidden,
                            n_layer=a.layers, n_head=a.heads, n_inner=a.intermediate,
                            activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0,
                            attn_pdrop=0.0, tie_word_embeddings=True)
        with torch.device("cuda"):  # initialised on the GPU: seconds, not tens on the CPU
            model = GPT2LMHeadModel(config)
    else:
        config = LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden,
                             intermediate_size=a.intermediate, num_hidden_layers=a.layers,
                             num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                             max_position_embeddings=a.positions, tie_word_embeddings=False)
        with torch.device("cuda"):
            model = LlamaForCausalLM(config)
    model.config._attn_implementation = "sdpa"
    if a.checkpointing:
        model.gradient_checkpointing_enable()
    return model.train()


def main():
    a = parse_args()
    torch.manual_seed(0)
    model = build_model(a)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    inputs = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    targets = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype):
            logits = model(input_ids=inputs).logits
        loss = F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.reshape(-1))
        loss.backward()
        if a.clip_grad > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_grad)
        optimizer.step()

    for _ in range(a.warmup):
        step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(a.steps):
        step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / a.steps
    print(json.dumps({"ms_per_step": ms, "tokens_per_s": a.batch * a.seq / ms * 1e3,
                      "torch_version": torch.__version__,
                      "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
