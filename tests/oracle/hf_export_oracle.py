"""The exported model directory, used by transformers as it is.

Usage: python hf_export_oracle.py LLMFT_BINARY DATA_DIR WORK_DIR

Makes a byte-level BPE tokenizer with the `tokenizers` library (trained on DATA_DIR's
text, with ChatML's <|im_start|> and <|im_end|>), its tokenizer_config.json and a ChatML
chat_template.jinja beside it, and a tiny LlamaForCausalLM saved by transformers in that
directory. llmft then trains it two steps in bf16 from --init-from, writing --save-dir
and a checkpoint, and `llmft export` turns the checkpoint into a second directory. For
both directories, with no file copied by hand:
  - AutoTokenizer loads them and apply_chat_template renders the folded-in template;
  - generation_config.json's eos ids hold the end-of-turn token <|im_end|>;
  - AutoModelForCausalLM loads the weights in bf16, the stored dtype;
  - pipeline("text-generation") continues a prompt greedily with the same tokens as
    `llmft generate --temperature 0`, and transformers' greedy reply to a chat message
    (stopped at the end-of-turn token) equals `llmft generate --chat`.
Exit 0 when all hold, 1 otherwise, 77 (skipped) without torch, transformers or tokenizers.

Exact equality of greedy tokens is sound only without near ties: the pipeline computes in
f32 from the same bf16 weights, llmft in f32 too, with sums in other orders (~1e-6 apart,
hf_oracle.py measures it), so every greedy choice must lead its runner-up by MIN_MARGIN.
"""

import json
import os
import shutil
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
try:
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
except ImportError as error:
    print(f"hf_export_oracle: skipped, {error}")
    sys.exit(77)

NEW_TOKENS = 12
MIN_MARGIN = 1e-4
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + "
          "message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
PROMPT = "And God said"
MESSAGE = "Who made the light?"


def make_base(data, base):
    """A tokenizer with a chat template and a tiny Llama over it, in `base`."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.train([os.path.join(data, "train.txt")], trainer)
    os.makedirs(base)
    tok.save(os.path.join(base, "tokenizer.json"))
    with open(os.path.join(base, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>"}, f)
    with open(os.path.join(base, "chat_template.jinja"), "w") as f:
        f.write(CHATML)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=48, intermediate_size=72, num_hidden_layers=2,
        num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=128,
        tie_word_embeddings=False, bos_token_id=None, eos_token_id=0, pad_token_id=None))
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)  # far from ties: see MIN_MARGIN
    model.save_pretrained(base)


def llmft(binary, *args):
    """llmft's stdout, read as tokenizers decodes bytes (a byte that forms no character
    reads as U+FFFD: the tiny model's replies need not be valid UTF-8)."""
    run = subprocess.run([binary, *args], capture_output=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"llmft {' '.join(args)} failed: {run.stderr.decode()}")
    return run.stdout.decode("utf-8", "replace")


def byte_level_text(tokenizer, ids):
    """The text of byte-level tokens as their bytes decode with U+FFFD, as llmft's stdout."""
    alphabet = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) \
        + list(range(ord("\xae"), ord("\xff") + 1))
    chars, n = alphabet[:], 0
    for b in range(256):
        if b not in alphabet:
            alphabet.append(b)
            chars.append(256 + n)
            n += 1
    byte_of = {chr(c): b for b, c in zip(alphabet, chars)}
    data = b"".join(bytes(byte_of[c] for c in t) for t in tokenizer.convert_ids_to_tokens(ids))
    return data.decode("utf-8", "replace")


def greedy(model, ids, eos):
    """transformers' greedy tokens after `ids` (stopping at `eos`), and the smallest lead of
    a chosen logit over the runner-up."""
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), max_new_tokens=NEW_TOKENS, do_sample=False,
                             eos_token_id=eos, pad_token_id=eos[0])
        logits = model(out).logits[0, len(ids) - 1:-1]
    top2 = torch.topk(logits, 2, dim=-1).values
    new = out[0, len(ids):].tolist()
    if new and new[-1] in eos:
        new.pop()
    return new, (top2[:, 0] - top2[:, 1]).min().item()


def check_directory(binary, directory):
    failures = []
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    chat_ids = tokenizer.apply_chat_template([{"role": "user", "content": MESSAGE}],
                                             add_generation_prompt=True, tokenize=True)
    if not isinstance(chat_ids, list):
        chat_ids = chat_ids["input_ids"]
    end_of_turn = tokenizer.convert_tokens_to_ids("<|im_end|>")
    generation = transformers.GenerationConfig.from_pretrained(directory)
    eos = generation.eos_token_id if isinstance(generation.eos_token_id, list) else [generation.eos_token_id]
    if end_of_turn not in eos:
        failures.append(f"generation_config eos {eos} lacks <|im_end|> ({end_of_turn})")
    stored = transformers.AutoModelForCausalLM.from_pretrained(directory)
    if stored.dtype != torch.bfloat16:
        failures.append(f"AutoModelForCausalLM loaded {stored.dtype}, not the stored bfloat16")
    pipe = transformers.pipeline("text-generation", model=directory, dtype=torch.float32)
    piped = pipe(PROMPT, max_new_tokens=NEW_TOKENS, do_sample=False, return_tensors=True)
    pipe_tokens = piped[0]["generated_token_ids"]
    prompt_ids = tokenizer(PROMPT)["input_ids"]
    expected, margin = greedy(pipe.model, prompt_ids, eos)
    if pipe_tokens[len(prompt_ids):][:len(expected)] != expected:
        failures.append("the pipeline's greedy tokens differ from model.generate's")
    text = llmft(binary, "generate", "--checkpoint", directory, "--prompt", PROMPT,
                 "--max-new-tokens", str(NEW_TOKENS), "--temperature", "0", "--threads", "1")
    want = PROMPT + byte_level_text(tokenizer, expected) + "\n"
    if text != want:
        failures.append(f"llmft generate printed {text!r}, the pipeline's tokens read {want!r}")
    reply, chat_margin = greedy(pipe.model, chat_ids, eos)
    chat = llmft(binary, "generate", "--checkpoint", directory, "--chat", MESSAGE,
                 "--max-new-tokens", str(NEW_TOKENS), "--temperature", "0", "--threads", "1")
    if chat != byte_level_text(tokenizer, reply) + "\n":
        failures.append(f"llmft generate --chat printed {chat!r}, transformers' reply is "
                        f"{byte_level_text(tokenizer, reply)!r}")
    margin = min(margin, chat_margin)
    print(f"{directory}: {'ok' if not failures else 'FAILED'}; eos {eos}; "
          f"continuation {text!r}; reply {chat!r}; smallest greedy lead {margin:.3g}")
    if margin < MIN_MARGIN:
        failures.append(f"a near tie (lead {margin:.3g}): change make_base's seed")
    for failure in failures:
        print("  " + failure)
    return not failures


def main():
    binary, data, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    base = os.path.join(work, "base")
    make_base(data, base)
    tokens = os.path.join(work, "val.tok")
    llmft(binary, "prepare", "--input", os.path.join(data, "val.txt"), "--output", tokens,
          "--tokenizer", base)
    saved, exported, checkpoints = (os.path.join(work, name) for name in ("saved", "exported", "ckpt"))
    llmft(binary, "--model", base, "--init-from", base, "--data", tokens, "--seq-len", "32",
          "--steps", "2", "--lr", "1e-4", "--dtype", "bf16", "--threads", "1", "--save-dir", saved,
          "--checkpoint-dir", checkpoints)
    llmft(binary, "export", "--checkpoint", checkpoints, "--save-dir", exported, "--tokenizer", base)
    ok = all([check_directory(binary, saved), check_directory(binary, exported)])
    print("hf_export_oracle: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
