"""Hugging Face oracle for llmft's GPT-2: checks a dump written by llmft.

Usage: python hf_gpt2_oracle.py DUMP_DIR [--tol 1e-4]

DUMP_DIR holds config.json (a GPT2Config), model.safetensors (F32 weights under
Hugging Face names, Conv1D weights as (in, out), no lm_head.weight: it is tied
to transformer.wte.weight), grads.safetensors (gradient of the mean loss on
batch 0, same names), batch.safetensors ("inputs", "targets": I32, (steps, B, T))
and result.json ({"loss": f, "adamw": {"lr", "beta1", "beta2", "eps",
"weight_decay", "losses": [...]}}).

The loss is the mean over all B*T positions of cross_entropy(logits[b, t],
targets[b, t]); targets are explicit (no label shift). The script rebuilds the
model in float32 with GPT2LMHeadModel, checks the loss and every parameter's
gradient (relative L2 error), then runs `steps` torch.optim.AdamW steps (weight
decay on tensors with 2+ dims only) and checks the loss before each update.
Exits 0 when every check is within --tol, 1 otherwise.
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
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

DROPOUT_KEYS = ("resid_pdrop", "embd_pdrop", "attn_pdrop")


class DumpError(Exception):
    """The dump is malformed: wrong names, shapes, dtypes or fields."""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump_dir", help="folder written by llmft")
    parser.add_argument("--tol", type=float, default=1e-4,
                        help="relative tolerance for every check (default 1e-4)")
    return parser.parse_args()


def load_config(dump_dir):
    config = GPT2Config.from_json_file(os.path.join(dump_dir, "config.json"))
    nonzero = [k for k in DROPOUT_KEYS if getattr(config, k)]
    if nonzero:
        raise DumpError(f"config.json: dropouts must be 0, got {nonzero}")
    if not config.tie_word_embeddings:
        raise DumpError("config.json: tie_word_embeddings must be true")
    config._attn_implementation = "eager"
    return config


def check_tensors(what, tensors, expected_shapes):
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
        raise DumpError(f"{what}:\n  " + "\n  ".join(problems))


def parameter_shapes(model):
    """Names and shapes of the model's parameters (tied lm_head counted once)."""
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def build_model(config, weights):
    model = GPT2LMHeadModel(config).float()
    check_tensors("model.safetensors", weights, parameter_shapes(model))
    model.load_state_dict(weights, strict=False)
    if model.lm_head.weight.data_ptr() != model.transformer.wte.weight.data_ptr():
        raise DumpError("lm_head.weight is not tied to transformer.wte.weight")
    return model.train(False)  # no dropout; gradients are the same either way


def load_batches(dump_dir, config):
    batch = load_file(os.path.join(dump_dir, "batch.safetensors"))
    if set(batch) != {"inputs", "targets"}:
        raise DumpError(f"batch.safetensors: names {sorted(batch)}, "
                        "expected ['inputs', 'targets']")
    inputs, targets = batch["inputs"], batch["targets"]
    for name, t in batch.items():
        if t.dtype != torch.int32 or t.dim() != 3 or t.numel() == 0:
            raise DumpError(f"batch.safetensors: {name} is {t.dtype} "
                            f"{tuple(t.shape)}, expected int32 (steps, B, T)")
        if t.min() < 0 or t.max() >= config.vocab_size:
            raise DumpError(f"batch.safetensors: {name} has ids outside "
                            f"[0, {config.vocab_size})")
    if inputs.shape != targets.shape:
        raise DumpError(f"batch.safetensors: inputs {tuple(inputs.shape)} and "
                        f"targets {tuple(targets.shape)} differ in shape")
    if inputs.shape[2] > config.n_positions:
        raise DumpError(f"batch.safetensors: T={inputs.shape[2]} exceeds "
                        f"n_positions={config.n_positions}")
    return inputs.long(), targets.long()


def mean_loss(model, inputs, targets):
    """Mean cross-entropy over all (B, T) positions against explicit targets."""
    logits = model(input_ids=inputs, use_cache=False).logits  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


def relative_error(reference, value):
    return abs(reference - value) / max(abs(reference), 1e-12)


def gradient_rows(model, llmft_grads):
    """One row per parameter: relative L2 error of llmft's gradient."""
    rows = []
    for name, p in model.named_parameters():
        ref, ours = p.grad.double(), llmft_grads[name].double()
        ref_norm = ref.norm().item()
        error = (ref - ours).norm().item() / max(ref_norm, 1e-12)
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
        loss = mean_loss(model, inputs[k], targets[k])
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return losses


def load_result(dump_dir, steps):
    with open(os.path.join(dump_dir, "result.json")) as f:
        result = json.load(f)
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


def run_checks(dump_dir):
    """Returns rows (check, detail, value) comparing HF with llmft's dump."""
    config = load_config(dump_dir)
    weights = load_file(os.path.join(dump_dir, "model.safetensors"))
    inputs, targets = load_batches(dump_dir, config)
    llmft_loss, hp, llmft_losses = load_result(dump_dir, inputs.shape[0])

    model = build_model(config, weights)
    llmft_grads = load_file(os.path.join(dump_dir, "grads.safetensors"))
    check_tensors("grads.safetensors", llmft_grads, parameter_shapes(model))
    loss = mean_loss(model, inputs[0], targets[0])
    loss.backward()
    rows = [("loss", f"hf {loss.item():.7g} llmft {llmft_loss:.7g}",
             relative_error(loss.item(), llmft_loss))]
    rows += gradient_rows(model, llmft_grads)

    hf_losses = adamw_losses(model, hp, inputs, targets)
    rows += [(f"adamw loss {k}", f"hf {hf:.7g} llmft {ours:.7g}",
              relative_error(hf, ours))
             for k, (hf, ours) in enumerate(zip(hf_losses, llmft_losses))]
    return rows


def severity(row):
    """Sort key: the row's error, NaN counting as the worst."""
    return math.inf if math.isnan(row[2]) else row[2]


def print_table(rows, tol):
    """Loss and AdamW rows in full; gradients as their worst parameter."""
    grads = [r for r in rows if r[0].startswith("grad ")]
    worst = max(grads, key=severity)
    summary = ("gradients", f"worst of {len(grads)}: {worst[0][5:]}", worst[2])
    shown = [rows[0], summary] + [r for r in rows if r[0].startswith("adamw ")]
    print(f"{'check':<20} {'rel. error':>10} {'tol':>8}  ok  detail")
    for name, detail, value in shown:
        ok = "yes" if value <= tol else "NO"
        print(f"{name:<20} {value:>10.3e} {tol:>8.1e}  {ok:<3} {detail}")


def main():
    args = parse_args()
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    try:
        rows = run_checks(args.dump_dir)
    except (DumpError, OSError, SafetensorError, ValueError) as e:
        print(f"hf_gpt2_oracle: FAILED: bad dump in {args.dump_dir}: {e}")
        return 1
    print_table(rows, args.tol)
    failures = sorted((r for r in rows if not r[2] <= args.tol),
                      key=severity, reverse=True)
    if failures:
        print(f"hf_gpt2_oracle: FAILED: {len(failures)} check(s) above tol "
              f"{args.tol:g}; worst:")
        for name, detail, value in failures[:10]:
            print(f"  {name}: {value:.3e} ({detail})")
        if len(failures) > 10:
            print(f"  ... and {len(failures) - 10} more")
        return 1
    print(f"hf_gpt2_oracle: OK ({len(rows)} checks within tol {args.tol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
