"""Oracle for the weights users download and the weights llmft writes, with transformers.

usage: hf_weights_oracle.py --llmft LLMFT --hf-logits HF_LOGITS --work DIR
                            --mpiexec MPIEXEC [--mpi-flag FLAG ...]

1. transformers builds a tiny LlamaForCausalLM (rope_scaling "llama3", grouped-query
   attention, untied head, 257-token byte vocabulary) and a tiny GPT2LMHeadModel, and writes
   each with save_pretrained(max_shard_size=...) as several shards plus
   model.safetensors.index.json, in float32 and in bfloat16. hf_logits loads each directory
   as `llmft --init-from` does; its logits and loss on a token batch must equal
   transformers' (float32 weights; the bfloat16 files against transformers running the same
   bfloat16 values in float32). Bound 1e-4 relative to the largest logit: float32 sums in
   another order differ by ~1e-6 at these sizes (hf_oracle.py measures it).
2. `llmft --init-from` the sharded LLaMA on 1 rank, on 2 data-parallel ranks and on 2
   tensor-parallel ranks: the step-1 losses agree (bound 1e-5, the tensor-parallel parity
   tests'), and every rank reads exactly the bytes this script computes from the shards'
   headers: all of them on a data-parallel rank; on a tensor-parallel rank its half of
   each split matrix (the odd vocabulary row on rank 0) and every norm.
3. `llmft --save-dir --save-max-shard-size 40KB` writes shards + index; transformers'
   from_pretrained loads them with no missing or unexpected tensors, and its logits equal
   hf_logits' on the same directory (bound as in 1).
Exit 0 on agreement, 1 otherwise. Offline: nothing is downloaded.
"""

import argparse
import copy
import json
import os
import re
import struct
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig,  # noqa: E402
                          LlamaForCausalLM)

VOCAB = 257
LOGIT_BOUND = 1e-4
PARITY_BOUND = 1e-5
SHARD = "40KB"
failures = []


def check(ok, message):
    print(("ok      " if ok else "FAILED  ") + message)
    if not ok:
        failures.append(message)


def tiny_llama():
    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=48, intermediate_size=72,
                         num_hidden_layers=2, num_attention_heads=6, num_key_value_heads=2,
                         max_position_embeddings=64, rope_theta=500000.0, rms_norm_eps=1e-5,
                         tie_word_embeddings=False,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                       "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                       "original_max_position_embeddings": 16})
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # norms away from 1, so a wrong norm weight shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model


def tiny_gpt2():
    torch.manual_seed(2)
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2,
                                      n_head=3, resid_pdrop=0.0, embd_pdrop=0.0,
                                      attn_pdrop=0.0, bos_token_id=VOCAB - 1,
                                      eos_token_id=VOCAB - 1))


def batch(work):
    generator = torch.Generator().manual_seed(3)
    inputs = torch.randint(0, VOCAB, (2, 24), generator=generator, dtype=torch.int32)
    targets = torch.randint(0, VOCAB, (2, 24), generator=generator, dtype=torch.int32)
    targets[:, :5] = -1  # masked, as prompt tokens are
    path = os.path.join(work, "batch.safetensors")
    save_file({"inputs": inputs, "targets": targets}, path)
    return inputs, targets, path


def reference(model, inputs, targets):
    with torch.no_grad():
        logits = model(input_ids=inputs.long()).logits.float()
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.long().reshape(-1),
                           ignore_index=-1)
    return logits, loss.item()


def llmft_logits(args, model_dir, batch_path):
    out = os.path.join(model_dir, "llmft_logits.safetensors")
    subprocess.run([args.hf_logits, model_dir, batch_path, out], check=True)
    result = load_file(out)
    os.remove(out)
    return result["logits"], result["loss"].item()


def compare(what, model, model_dir, inputs, targets, batch_path, args):
    ref_logits, ref_loss = reference(model, inputs, targets)
    logits, loss = llmft_logits(args, model_dir, batch_path)
    scale = ref_logits.abs().max().item()
    error = (logits - ref_logits).abs().max().item() / scale
    check(error <= LOGIT_BOUND, f"{what}: logits, max error {error:.2e} of the largest logit")
    loss_error = abs(loss - ref_loss) / abs(ref_loss)
    check(loss_error <= LOGIT_BOUND,
          f"{what}: loss {loss:.7f} vs transformers {ref_loss:.7f} ({loss_error:.1e})")


def shard_files(model_dir):
    names = sorted(n for n in os.listdir(model_dir)
                   if re.fullmatch(r"model-\d{5}-of-\d{5}\.safetensors", n))
    return [os.path.join(model_dir, n) for n in names]


def header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        entries = json.loads(f.read(length))
    entries.pop("__metadata__", None)
    return 8 + length, entries


ELEMENT_BYTES = {"F32": 4, "BF16": 2, "F16": 2}
VOCAB_ROW_MULTIPLE = 64  # DecoderModel::kVocabRowMultiple


def rank_bytes(model_dir, rank, tp):
    """What one rank of `tp` tensor-parallel ranks must read: Megatron's split of LLaMA."""
    total = 0
    for path in shard_files(model_dir):
        header_bytes, entries = header(path)
        total += header_bytes
        for name, entry in entries.items():
            rows, cols = (entry["shape"] + [1])[:2]
            element = ELEMENT_BYTES[entry["dtype"]]
            if tp == 1 or "norm" in name:
                total += rows * cols * element
            elif re.search(r"(o_proj|down_proj)\.weight$", name):
                total += rows * (cols // tp) * element
            else:  # q, k, v, gate, up, embed_tokens, lm_head: rows
                per_rank = -(-rows // tp)
                if re.search(r"(embed_tokens|lm_head)\.weight$", name):
                    # a rank's vocabulary rows padded to a multiple of 64, as llmft stores them
                    per_rank = -(-per_rank // VOCAB_ROW_MULTIPLE) * VOCAB_ROW_MULTIPLE
                total += max(0, min(per_rank, rows - rank * per_rank)) * cols * element
    return total


def run_llmft(args, ranks, extra, work, name):
    metrics = os.path.join(work, name + ".jsonl")
    if os.path.exists(metrics):  # llmft appends to it
        os.remove(metrics)
    command = [args.mpiexec, "-n", str(ranks), *args.mpi_flag, args.llmft,
               "--data", os.path.join(work, "train.tok"), "--seq-len", "16", "--micro-batch",
               "2", "--global-batch", "4", "--steps", "1", "--threads", "1", "--metrics", metrics, *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stdout, done.stderr)
        check(False, f"{name}: llmft exited {done.returncode}")
        return None, None
    read = re.search(r"bytes read per rank: ([\d, ]+) \(", done.stdout)
    with open(metrics) as f:  # the first step's line, after the run record
        loss = next(line for line in map(json.loads, f) if "step" in line)["loss"]
    return [int(x) for x in read.group(1).split(",")] if read else None, loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llmft", required=True)
    parser.add_argument("--hf-logits", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--data", required=True, help="examples/data")
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--mpi-flag", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    inputs, targets, batch_path = batch(args.work)

    # 1. What transformers writes, llmft reads.
    models = {}
    for family, model in (("llama", tiny_llama()), ("gpt2", tiny_gpt2())):
        model.eval()
        for dtype in ("float32", "bfloat16"):
            model_dir = os.path.join(args.work, f"{family}_{dtype}")
            stored = copy.deepcopy(model).to(getattr(torch, dtype))
            stored.save_pretrained(model_dir, max_shard_size=SHARD)
            shards = len(shard_files(model_dir))
            check(shards > 2, f"{family} {dtype}: save_pretrained wrote {shards} shards")
            # The stored values, run in float32 as llmft runs them.
            compare(f"{family} {dtype} --init-from", stored.float(), model_dir, inputs, targets,
                    batch_path, args)
            if dtype == "float32":
                models[family] = (model, model_dir)

    # 2. Each rank reads only its slices; every layout starts from the same model.
    llama_dir = models["llama"][1]
    subprocess.run([args.llmft, "prepare", "--input", os.path.join(args.data, "val.txt"),
                    "--output", os.path.join(args.work, "train.tok")], check=True,
                   capture_output=True)
    common = ["--model", llama_dir, "--init-from", llama_dir]
    losses = {}
    for name, ranks, extra in (("1 rank", 1, []), ("dp 2", 2, []), ("tp 2", 2, ["--tp", "2"])):
        read, losses[name] = run_llmft(args, ranks, common + extra, args.work,
                                       name.replace(" ", "_"))
        tp = 2 if "tp" in name else 1
        expected = [rank_bytes(llama_dir, r, tp) for r in range(ranks)]
        check(read == expected, f"{name}: bytes read per rank {read}, expected {expected}")
    for name in ("dp 2", "tp 2"):
        if losses[name] is None or losses["1 rank"] is None:
            continue
        gap = abs(losses[name] - losses["1 rank"]) / abs(losses["1 rank"])
        check(gap <= PARITY_BOUND, f"{name}: step-1 loss {losses[name]:.7f} vs 1 rank "
              f"{losses['1 rank']:.7f} ({gap:.1e})")

    # 3. What llmft writes, transformers reads.
    for family, (model, model_dir) in models.items():
        saved = os.path.join(args.work, f"{family}_saved")
        run_llmft(args, 1, ["--model", model_dir, "--init-from", model_dir, "--save-dir", saved,
                            "--save-max-shard-size", SHARD], args.work, family + "_save")
        shards = len(shard_files(saved))
        check(shards > 2 and os.path.exists(os.path.join(saved, "model.safetensors.index.json")),
              f"{family} --save-dir: {shards} shards and the index")
        cls = LlamaForCausalLM if family == "llama" else GPT2LMHeadModel
        loaded, info = cls.from_pretrained(saved, output_loading_info=True)
        loaded.eval()
        check(not info["missing_keys"] and not info["unexpected_keys"],
              f"{family}: from_pretrained missing {info['missing_keys']}, "
              f"unexpected {info['unexpected_keys']}")
        compare(f"{family} --save-dir -> from_pretrained", loaded, saved, inputs, targets,
                batch_path, args)

    print("FAILED:" if failures else "all checks passed", *failures, sep="\n  ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
