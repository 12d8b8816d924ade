"""Hugging Face oracle for llmft's GPT-2 and LLaMA: checks a dump written by llmft.

Usage: python hf_oracle.py DUMP_DIR [--tol 1e-4]

DUMP_DIR holds:
  config.json        a Hugging Face config; "architectures": ["GPT2LMHeadModel"] or
                     ["LlamaForCausalLM"] picks the model family (see below)
  model.safetensors  F32 weights under Hugging Face names, exactly the model's
                     parameters (a tied lm_head.weight is not written)
  grads.safetensors  gradient of the mean loss on batch 0 at those weights, same names
  logits.safetensors "logits": F32 (B, T, V), the logits on batch 0 at those weights
  batch.safetensors  "inputs", "targets": I32 (steps, B, T); inputs in [0, V),
                     targets in [0, V) or -1 (ignored position)
  result.json        {"loss": f, "adamw": {"lr", "beta1", "beta2", "eps",
                     "weight_decay", "losses": [one per step]}}

GPT2LMHeadModel: a GPT2Config with zero dropouts and tie_word_embeddings true;
Conv1D weights as (in, out); no lm_head.weight (tied to transformer.wte.weight).

LlamaForCausalLM: a LlamaConfig that states hidden_size, intermediate_size,
num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size,
max_position_embeddings, rms_norm_eps, rope_theta and tie_word_embeddings, with
hidden_act "silu", attention_bias and mlp_bias false, RoPE default or scaled by
rope_scaling / rope_parameters of rope_type "linear" or "llama3" (transformers
computes the scaled frequencies from the config, so the check covers llmft's).
Weights: model.embed_tokens.weight (V, C); per layer i model.layers.{i}.
input_layernorm.weight, self_attn.{q,k,v,o}_proj.weight, post_attention_layernorm.
weight, mlp.{gate,up,down}_proj.weight (nn.Linear layout (out, in), HF's
rotate_half RoPE layout for q and k rows); model.norm.weight; lm_head.weight (V, C)
only when tie_word_embeddings is false.

The loss is the mean of cross_entropy(logits[b, t], targets[b, t]) over the
positions whose target is not -1; targets are explicit (no label shift). The
script rebuilds the model in float32 (eager attention), checks the loss, the
logits (relative L2 error and max abs error over max |logit|), every parameter's
gradient (relative L2 error), then runs `steps` torch.optim.AdamW steps (weight
decay on tensors with 2+ dims only, so not on norm weights or biases) and checks
the loss before each update. Exits 0 when every check is within --tol, 1 otherwise.

The tolerance: torch and llmft are two f32 implementations of the same sums, added in
other orders by other kernels (and exp, tanh from other libraries, each within an ulp or
two), which moves the loss, logits and gradients by ~1e-6 relative and the AdamW losses
by about as much over 5 steps (measured; tests/support/parity.h gives the arithmetic).
1e-4 is 100x that, whatever either library's kernels do, and well below what a wrong
formula moves (a wrong weight-decay rule at lr 1e-2 moves the losses past it).
"""

import argparse
import json
import math
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import transformers  # noqa: E402
from safetensors import SafetensorError  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig,  # noqa: E402
                          LlamaForCausalLM)

IGNORE = -1  # target id of a position that does not count in the loss


class DumpError(Exception):
    """The dump is malformed: wrong names, shapes, dtypes or fields."""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump_dir", help="folder written by llmft")
    parser.add_argument("--tol", type=float, default=1e-4,
                        help="relative tolerance for every check (default 1e-4)")
    return parser.parse_args()


class Gpt2:
    """GPT2LMHeadModel: tied head, learned positions, Conv1D weights."""
    architecture = "GPT2LMHeadModel"
    model_class = GPT2LMHeadModel
    embedding = "transformer.wte.weight"
    dropout_keys = ("resid_pdrop", "embd_pdrop", "attn_pdrop")

    def load_config(self, path, raw):
        try:
            config = GPT2Config.from_json_file(path)
        except Exception as e:  # validation errors' types vary across versions
            raise DumpError(f"config.json: not a valid GPT2Config: {e}")
        nonzero = [k for k in self.dropout_keys if getattr(config, k)]
        if nonzero:
            raise DumpError(f"config.json: dropouts must be 0, got {nonzero}")
        if not config.tie_word_embeddings:
            raise DumpError("config.json: tie_word_embeddings must be true")
        return config

    def max_positions(self, config):
        return config.n_positions


class Llama:
    """LlamaForCausalLM: RMSNorm, RoPE (rotate_half), GQA, SwiGLU; head tied or not."""
    architecture = "LlamaForCausalLM"
    model_class = LlamaForCausalLM
    embedding = "model.embed_tokens.weight"
    required_keys = ("hidden_size", "intermediate_size", "num_hidden_layers",
                     "num_attention_heads", "num_key_value_heads", "vocab_size",
                     "max_position_embeddings", "rms_norm_eps",
                     "tie_word_embeddings")

    def load_config(self, path, raw):
        missing = [k for k in self.required_keys if k not in raw]
        if "rope_theta" not in raw and "rope_theta" not in (raw.get("rope_parameters")
                                                           or {}):
            missing.append("rope_theta")
        if missing:
            raise DumpError(f"config.json: missing {missing} (LlamaConfig's defaults "
                            "are not llmft's; state them)")
        try:
            config = LlamaConfig.from_json_file(path)
        except Exception as e:  # validation errors' types vary across versions
            raise DumpError(f"config.json: not a valid LlamaConfig: {e}")
        problems = []
        if config.hidden_act != "silu":
            problems.append(f"hidden_act {config.hidden_act!r}, expected 'silu'")
        for key in ("attention_bias", "mlp_bias"):
            if getattr(config, key):
                problems.append(f"{key} must be false")
        if config.attention_dropout:
            problems.append(f"attention_dropout must be 0, "
                            f"got {config.attention_dropout}")
        rope = (getattr(config, "rope_parameters", None)  # transformers >= 5
                or getattr(config, "rope_scaling", None) or {})
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        if rope_type not in ("default", "linear", "llama3"):
            problems.append(f"RoPE type {rope_type!r}, expected 'default', 'linear' "
                            "or 'llama3'")
        heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
        head_dim = config.hidden_size // heads
        if config.hidden_size % heads:
            problems.append(f"hidden_size {config.hidden_size} is not a multiple "
                            f"of num_attention_heads {heads}")
        elif (getattr(config, "head_dim", None) or head_dim) != head_dim:
            problems.append(f"head_dim {config.head_dim}, expected hidden_size / "
                            f"num_attention_heads = {head_dim}")
        elif head_dim % 2:
            problems.append(f"head_dim {head_dim} must be even for RoPE")
        if kv_heads < 1 or heads % kv_heads:
            problems.append(f"num_attention_heads {heads} is not a multiple of "
                            f"num_key_value_heads {kv_heads}")
        if config.pad_token_id is not None:
            problems.append(f"pad_token_id must be null, got {config.pad_token_id} "
                            "(HF would zero that embedding row's gradient)")
        if problems:
            raise DumpError("config.json:\n  " + "\n  ".join(problems))
        return config

    def max_positions(self, config):
        return config.max_position_embeddings


FAMILIES = {f.architecture: f for f in (Gpt2(), Llama())}


def load_config(dump_dir):
    """Returns (family, config) as config.json's architectures names them."""
    path = os.path.join(dump_dir, "config.json")
    with open(path) as f:
        try:
            raw = json.load(f)
        except ValueError as e:
            raise DumpError(f"config.json: not JSON: {e}")
    if not isinstance(raw, dict):
        raise DumpError("config.json: expected a JSON object")
    architectures = raw.get("architectures")
    if (not isinstance(architectures, list) or len(architectures) != 1
            or architectures[0] not in FAMILIES):
        raise DumpError(f"config.json: architectures {architectures!r}, expected "
                        f"one of {[[a] for a in FAMILIES]}")
    family = FAMILIES[architectures[0]]
    config = family.load_config(path, raw)
    config._attn_implementation = "eager"
    return family, config


def check_tensors(what, tensors, expected_shapes, hint=""):
    """Requires exactly the expected names, each F32 with the expected shape."""
    missing = sorted(set(expected_shapes) - set(tensors))
    extra = sorted(set(tensors) - set(expected_shapes))
    problems = [f"missing {n}" for n in missing] + [f"unexpected {n}" for n in extra]
    for name in sorted(set(tensors) & set(expected_shapes)):
        t = tensors[name]
        if t.dtype != torch.float32:
            problems.append(f"{name}: dtype {t.dtype}, expected float32")
        elif tuple(t.shape) != expected_shapes[name]:
            problems.append(f"{name}: shape {tuple(t.shape)}, "
                            f"expected {expected_shapes[name]}")
    if problems:
        raise DumpError(f"{what}:\n  " + "\n  ".join(problems)
                        + (f"\n  ({hint})" if (missing or extra) and hint else ""))


def parameter_shapes(model):
    """Names and shapes of the model's parameters (tied lm_head counted once)."""
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def tie_hint(family, config):
    if config.tie_word_embeddings:
        return (f"tie_word_embeddings is true: the head is {family.embedding}, "
                "lm_head.weight is not written")
    return "tie_word_embeddings is false: lm_head.weight (V, C) is written"


def build_model(family, config, weights):
    model = family.model_class(config).float()
    if model.config._attn_implementation != "eager":
        raise RuntimeError(f"transformers chose {model.config._attn_implementation} "
                           "attention, expected eager")
    embedding = model.get_input_embeddings().weight
    tied = model.lm_head.weight.data_ptr() == embedding.data_ptr()
    if tied != bool(config.tie_word_embeddings):
        raise RuntimeError(f"transformers {'tied' if tied else 'did not tie'} "
                           f"lm_head.weight and {family.embedding}, but config.json "
                           f"has tie_word_embeddings {config.tie_word_embeddings}")
    check_tensors("model.safetensors", weights, parameter_shapes(model),
                  tie_hint(family, config))
    model.load_state_dict(weights, strict=False)
    return model.train(False)  # no dropout; gradients are the same either way


def load_batches(dump_dir, config, family):
    batch = load_file(os.path.join(dump_dir, "batch.safetensors"))
    if set(batch) != {"inputs", "targets"}:
        raise DumpError(f"batch.safetensors: names {sorted(batch)}, "
                        "expected ['inputs', 'targets']")
    inputs, targets = batch["inputs"], batch["targets"]
    for name, t in batch.items():
        if t.dtype != torch.int32 or t.dim() != 3 or t.numel() == 0:
            raise DumpError(f"batch.safetensors: {name} is {t.dtype} "
                            f"{tuple(t.shape)}, expected int32 (steps, B, T)")
    V = config.vocab_size
    if inputs.min() < 0 or inputs.max() >= V:
        raise DumpError(f"batch.safetensors: inputs has ids outside [0, {V})")
    if ((targets < IGNORE) | (targets >= V)).any():
        raise DumpError(f"batch.safetensors: targets has ids outside [0, {V}) "
                        f"other than {IGNORE} (ignored position)")
    if inputs.shape != targets.shape:
        raise DumpError(f"batch.safetensors: inputs {tuple(inputs.shape)} and "
                        f"targets {tuple(targets.shape)} differ in shape")
    counted = (targets != IGNORE).flatten(1).sum(1)
    empty = [k for k, n in enumerate(counted.tolist()) if n == 0]
    if empty:
        raise DumpError(f"batch.safetensors: every target of step(s) {empty} is "
                        f"{IGNORE}: the mean loss is undefined")
    limit = family.max_positions(config)
    if inputs.shape[2] > limit:
        raise DumpError(f"batch.safetensors: T={inputs.shape[2]} exceeds the "
                        f"config's {limit} positions")
    return inputs.long(), targets.long()


def load_logits(dump_dir, shape):
    path = os.path.join(dump_dir, "logits.safetensors")
    if not os.path.exists(path):
        raise DumpError("logits.safetensors is missing: the dump is incomplete "
                        "(llmft must write the logits on batch 0)")
    logits = load_file(path)
    check_tensors("logits.safetensors", logits, {"logits": shape})
    return logits["logits"]


def forward(model, inputs, targets):
    """Returns (loss, logits): mean cross-entropy over targets other than IGNORE."""
    logits = model(input_ids=inputs, use_cache=False).logits  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1), ignore_index=IGNORE)
    return loss, logits


def relative_error(reference, value):
    return abs(reference - value) / max(abs(reference), 1e-12)


def ratio(numerator, denominator):
    """numerator / denominator, NaN when either is NaN."""
    if math.isnan(denominator):
        return math.nan
    return numerator / max(denominator, 1e-12)


def logits_rows(hf_logits, llmft_logits):
    """Relative L2 error and max abs error over max |logit|, whole tensor."""
    ref, ours = hf_logits.detach().double(), llmft_logits.double()
    diff = ref - ours
    ref_max = ref.abs().max().item()
    detail = f"max|logit| hf {ref_max:.4e} llmft {ours.abs().max().item():.4e}"
    return [("logits rel L2", detail,
             ratio(diff.norm().item(), ref.norm().item())),
            ("logits max abs", detail, ratio(diff.abs().max().item(), ref_max))]


def gradient_rows(model, llmft_grads):
    """One row per parameter: relative L2 error of llmft's gradient."""
    rows = []
    for name, p in model.named_parameters():
        ref, ours = p.grad.double(), llmft_grads[name].double()
        ref_norm = ref.norm().item()
        error = ratio((ref - ours).norm().item(), ref_norm)
        detail = f"|g| hf {ref_norm:.4e} llmft {ours.norm().item():.4e}"
        rows.append((f"grad {name}", detail, error))
    return rows


def make_adamw(model, hp):
    """torch AdamW; decoupled weight decay only on tensors with 2+ dims."""
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if p.dim() >= 2],
         "weight_decay": hp["weight_decay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]),
                             eps=hp["eps"])


def adamw_losses(model, hp, inputs, targets):
    """Loss before each AdamW update k, computed on batch k.

    REQUIRES: model holds the initial weights (stale gradients are cleared).
    """
    optimizer = make_adamw(model, hp)
    losses = []
    for k in range(inputs.shape[0]):
        optimizer.zero_grad(set_to_none=True)
        loss, _ = forward(model, inputs[k], targets[k])
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return losses


def load_result(dump_dir, steps):
    with open(os.path.join(dump_dir, "result.json")) as f:
        try:
            result = json.load(f)
        except ValueError as e:
            raise DumpError(f"result.json: not JSON: {e}")
    try:
        hp = {k: float(result["adamw"][k])
              for k in ("lr", "beta1", "beta2", "eps", "weight_decay")}
        losses = [float(x) for x in result["adamw"]["losses"]]
        loss = float(result["loss"])
    except (KeyError, TypeError, ValueError) as e:
        raise DumpError(f"result.json: missing or bad field: {e!r}")
    if len(losses) != steps:
        raise DumpError(f"result.json: {len(losses)} AdamW losses, "
                        f"batch.safetensors has {steps} steps")
    return loss, hp, losses


def describe(family, config, inputs, targets):
    steps, B, T = inputs.shape
    counted = int((targets[0] != IGNORE).sum())
    what = f"{family.architecture}"
    if family is FAMILIES["LlamaForCausalLM"]:
        rope = (getattr(config, "rope_parameters", None)
                or getattr(config, "rope_scaling", None) or {})
        what += (f" (heads {config.num_attention_heads}, kv heads "
                 f"{config.num_key_value_heads}, "
                 f"{'tied' if config.tie_word_embeddings else 'untied'} head, RoPE "
                 f"{rope.get('rope_type', rope.get('type', 'default'))})")
    return (f"{what}: B={B} T={T} V={config.vocab_size}, {counted} of {B * T} "
            f"targets counted on batch 0, {steps} AdamW steps")


def run_checks(dump_dir):
    """Returns (description, rows (check, detail, value)) comparing HF with the dump."""
    family, config = load_config(dump_dir)
    weights = load_file(os.path.join(dump_dir, "model.safetensors"))
    inputs, targets = load_batches(dump_dir, config, family)
    llmft_loss, hp, llmft_losses = load_result(dump_dir, inputs.shape[0])

    model = build_model(family, config, weights)
    llmft_grads = load_file(os.path.join(dump_dir, "grads.safetensors"))
    check_tensors("grads.safetensors", llmft_grads, parameter_shapes(model),
                  tie_hint(family, config))
    llmft_logits = load_logits(dump_dir, (*inputs.shape[1:], config.vocab_size))
    loss, logits = forward(model, inputs[0], targets[0])
    loss.backward()
    rows = [("loss", f"hf {loss.item():.7g} llmft {llmft_loss:.7g}",
             relative_error(loss.item(), llmft_loss))]
    rows += logits_rows(logits, llmft_logits)
    rows += gradient_rows(model, llmft_grads)

    hf_losses = adamw_losses(model, hp, inputs, targets)
    rows += [(f"adamw loss {k}", f"hf {hf:.7g} llmft {ours:.7g}",
              relative_error(hf, ours))
             for k, (hf, ours) in enumerate(zip(hf_losses, llmft_losses))]
    return describe(family, config, inputs, targets), rows


def severity(row):
    """Sort key: the row's error, NaN counting as the worst."""
    return math.inf if math.isnan(row[2]) else row[2]


def print_table(rows, tol):
    """Every row in full except gradients, shown as their worst parameter."""
    grads = [r for r in rows if r[0].startswith("grad ")]
    worst = max(grads, key=severity)
    summary = ("gradients", f"worst of {len(grads)}: {worst[0][5:]}", worst[2])
    shown = [r for r in rows if r[0] in ("loss", "logits rel L2", "logits max abs")]
    shown += [summary] + [r for r in rows if r[0].startswith("adamw ")]
    print(f"{'check':<20} {'rel. error':>10} {'tol':>8}  ok  detail")
    for name, detail, value in shown:
        ok = "yes" if value <= tol else "NO"
        print(f"{name:<20} {value:>10.3e} {tol:>8.1e}  {ok:<3} {detail}")


def main():
    args = parse_args()
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    try:
        description, rows = run_checks(args.dump_dir)
    except (DumpError, OSError, SafetensorError, ValueError) as e:
        print(f"hf_oracle: FAILED: bad dump in {args.dump_dir}: {e}")
        return 1
    print(f"hf_oracle: {description}")
    print_table(rows, args.tol)
    failures = sorted((r for r in rows if not r[2] <= args.tol),
                      key=severity, reverse=True)
    if failures:
        print(f"hf_oracle: FAILED: {len(failures)} check(s) above tol "
              f"{args.tol:g}; worst:")
        for name, detail, value in failures[:10]:
            print(f"  {name}: {value:.3e} ({detail})")
        if len(failures) > 10:
            print(f"  ... and {len(failures) - 10} more")
        return 1
    print(f"hf_oracle: OK ({len(rows)} checks within tol {args.tol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
