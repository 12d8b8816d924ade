"""Hugging Face generation oracle: llmft reads what transformers writes.

Usage: python hf_generate_oracle.py LLMFT_BINARY WORK_DIR

For a tiny GPT2LMHeadModel and a tiny LlamaForCausalLM (grouped-query attention, untied
head) over the byte vocabulary (257 tokens), transformers writes the model with
save_pretrained (config.json + model.safetensors); `llmft generate` loads that
directory and continues a prompt greedily with its KV cache; the bytes it prints must
equal transformers' own greedy generate. Exit 0 on agreement, 1 otherwise.

Exact equality is sound only when no greedy choice is a near tie: llmft and torch add
their sums in other orders, so their logits differ by ~1e-6 (hf_oracle.py measures it).
The oracle therefore also checks that at every generated position transformers' best
logit leads the runner-up by at least MIN_MARGIN, 100x that.
"""

import os
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM  # noqa: E402

VOCAB = 257  # bytes 0..255 and end-of-text 256, llmft's byte tokenizer
PROMPT = b"In the beginning God created"
NEW_TOKENS = 24
MIN_MARGIN = 1e-4


def tiny_models():
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2,
                                      n_head=3, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=48, intermediate_size=72,
                                         num_hidden_layers=2, num_attention_heads=6,
                                         num_key_value_heads=2, max_position_embeddings=64,
                                         rope_theta=500000.0, rms_norm_eps=1e-6,
                                         tie_word_embeddings=False))
    return {"gpt2": gpt2, "llama": llama}


def spread_weights(model):
    """Weights larger than the default init, so greedy choices are far from ties."""
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)


def greedy(model):
    """transformers' greedy continuation of PROMPT (bytes as llmft prints them) and the
    smallest lead of the chosen logit over the runner-up along it."""
    ids = torch.tensor([list(PROMPT)])
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False,
                             pad_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
        logits = model(out).logits[0, len(PROMPT) - 1:-1]
    top2 = torch.topk(logits, 2, dim=-1).values
    margin = (top2[:, 0] - top2[:, 1]).min().item()
    tokens = out[0, len(PROMPT):].tolist()
    if tokens and tokens[-1] == VOCAB - 1:
        tokens.pop()  # llmft stops at it without printing it
    text = PROMPT + bytes(tokens) + b"\n"
    return text, margin


def main():
    binary, work = sys.argv[1], sys.argv[2]
    failures = 0
    for name, model in tiny_models().items():
        spread_weights(model)
        model.eval()
        directory = os.path.join(work, name)
        model.save_pretrained(directory, safe_serialization=True)
        command = [binary, "generate", "--checkpoint", directory, "--prompt", PROMPT.decode(),
                   "--max-new-tokens", str(NEW_TOKENS), "--temperature", "0", "--threads", "1"]
        run = subprocess.run(command, capture_output=True, check=False)
        # Both streams into one pipe, as a batch job's log: the text comes whole before
        # what generate says on stderr (stdout is buffered in a pipe, stderr is not).
        shared = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                check=False)
        expected, margin = greedy(model)
        ok = (run.returncode == 0 and run.stdout == expected
              and shared.stdout == expected + run.stderr)
        if shared.stdout != expected + run.stderr:
            print(f"  one log for both streams: {shared.stdout!r}")
        print(f"{name}: {'ok' if ok else 'MISMATCH'}\n  transformers: {expected!r}\n"
              f"  llmft:        {run.stdout!r}{run.stderr.decode()}\n"
              f"  smallest lead of a greedy choice: {margin:.3g}")
        if margin < MIN_MARGIN:
            print(f"  the test model has a near tie (lead {margin:.3g} < {MIN_MARGIN:g}): "
                  "change spread_weights' seed")
            ok = False
        failures += 0 if ok else 1
    print("hf_generate_oracle: " + ("OK" if failures == 0 else f"{failures} model(s) differ"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
