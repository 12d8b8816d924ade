# PyTorch peer for llmft's training-step benchmark: times full GPT-2 or LLaMA AdamW steps on CPU.
"""PyTorch peer for llmft's training-step benchmark.

Builds a float32 GPT2LMHeadModel (dropouts 0) or LlamaForCausalLM (SDPA attention) of
the given shape, and times full training steps on random tokens: zero_grad, forward,
mean cross-entropy of the logits against explicit targets, backward,
torch.optim.AdamW step. After each timed step it also times PyTorch's own 1024^3
product (best of 3), as llmft's benchmark times OpenBLAS's, so that the two sides' GEMM
rates can be set side by side. Prints one JSON line: {"ms_per_step", "ms_min",
"tokens_per_s", "sgemm_gflops" (the median of those rates), "torch_version", "threads"}.
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import transformers  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig,  # noqa: E402
                          LlamaForCausalLM)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--family", choices=["gpt2", "llama"], default="gpt2", help="model family")
    add("--n-layer", type=int, default=12, help="transformer blocks")
    add("--n-head", type=int, default=12, help="attention heads")
    add("--n-embd", type=int, default=768, help="hidden size C")
    add("--vocab", type=int, default=50257, help="vocabulary size V")
    add("--n-positions", type=int, default=1024, help="max sequence length")
    add("--n-kv-head", type=int, default=0, help="llama: key/value heads (0: --n-head)")
    add("--intermediate", type=int, default=0, help="llama: MLP width")
    add("--rope-theta", type=float, default=10000.0, help="llama: rotary base")
    add("--tie", type=int, default=0, help="llama: 1 to tie the head to the embeddings")
    add("--batch", type=int, default=4, help="sequences per step B")
    add("--seq", type=int, default=64, help="tokens per sequence T")
    add("--steps", type=int, default=10, help="timed steps")
    add("--warmup", type=int, default=2, help="untimed steps before timing")
    add("--threads", type=int, default=2, help="torch intra-op threads")
    add("--seed", type=int, default=0, help="seed for weights and tokens")
    args = parser.parse_args()
    if args.seq > args.n_positions:
        parser.error("--seq must not exceed --n-positions")
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
    return args


def build_model(args):
    if args.family == "llama":
        config = LlamaConfig(
            vocab_size=args.vocab, hidden_size=args.n_embd, intermediate_size=args.intermediate,
            num_hidden_layers=args.n_layer, num_attention_heads=args.n_head,
            num_key_value_heads=args.n_kv_head or args.n_head,
            max_position_embeddings=args.n_positions, rope_theta=args.rope_theta,
            tie_word_embeddings=bool(args.tie), attention_dropout=0.0)
        return LlamaForCausalLM(config).float().train()
    config = GPT2Config(
        vocab_size=args.vocab, n_positions=args.n_positions, n_embd=args.n_embd,
        n_layer=args.n_layer, n_head=args.n_head, activation_function="gelu_new",
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True,
        bos_token_id=None, eos_token_id=None)
    return GPT2LMHeadModel(config).float().train()


def random_batch(args, generator):
    """Inputs and explicit targets, each (B, T) token ids."""
    shape = (2, args.batch, args.seq)
    tokens = torch.randint(0, args.vocab, shape, generator=generator)
    return tokens[0], tokens[1]


def train_step(model, optimizer, inputs, targets):
    optimizer.zero_grad(set_to_none=True)
    logits = model(input_ids=inputs, use_cache=False).logits  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    optimizer.step()


def sgemm_gflops(n=1024):
    """PyTorch's rate for an n^3 fp32 product A B^T, best of 3 after one untimed run."""
    a, b = torch.full((n, n), 0.5), torch.full((n, n), 0.25)
    torch.mm(a, b.t())
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        torch.mm(a, b.t())
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 / best * 1e-9


def time_steps(args, model, optimizer):
    """Milliseconds for each timed step, after the warmup steps, and the product rate
    measured right after each."""
    generator = torch.Generator().manual_seed(args.seed)
    times_ms, rates = [], []
    for step in range(args.warmup + args.steps):
        inputs, targets = random_batch(args, generator)
        start = time.perf_counter()
        train_step(model, optimizer, inputs, targets)
        if step >= args.warmup:
            times_ms.append(1e3 * (time.perf_counter() - start))
            rates.append(sgemm_gflops())
    return times_ms, rates


def main():
    args = parse_args()
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    times_ms, rates = time_steps(args, model, optimizer)
    ms_per_step = sum(times_ms) / len(times_ms)
    print(json.dumps({
        "ms_per_step": ms_per_step,
        "ms_min": min(times_ms),
        "tokens_per_s": args.batch * args.seq / (ms_per_step / 1e3),
        "sgemm_gflops": statistics.median(rates),
        "torch_version": torch.__version__,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
