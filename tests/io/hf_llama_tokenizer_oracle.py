"""Oracle for llmft's Llama-family tokenizers: Hugging Face `tokenizers` says what the ids are.

Builds, offline, the two kinds of tokenizer.json that Llama-family models ship, each with a
tokenizer_config.json beside it:

- "sentencepiece": Llama 2 / TinyLlama / Mistral style. BPE with byte_fallback, unk_token
  "<unk>" and fuse_unk, the "<0x00>".."<0xFF>" byte tokens in the vocabulary, the
  normalizer Sequence[Prepend("\u2581"), Replace(" " -> "\u2581")], the decoder
  Sequence[Replace, ByteFallback, Fuse, Strip] and TemplateProcessing "<s> $A". Two
  variants of it: pre_tokenizer Metaspace (prepend_scheme "first") with a Metaspace
  decoder instead of the normalizer, and Metaspace "always".
- "llama3": byte-level BPE with ignore_merges, the pre-tokenizer Sequence[Split(Llama 3's
  regex, Isolated), ByteLevel(use_regex false)], post_processor Sequence[ByteLevel,
  TemplateProcessing "<|begin_of_text|> $A"] and the ByteLevel decoder.

Then encodes held-out text (the bundled val.txt, multilingual lines, odd white space,
emoji, code, runs of digits, contractions in capitals, literal special tokens, seeded
random text from pieces where the pre-tokenizer has choices to make) with `tokenizers`,
with and without special tokens, and decodes the ids; bpe_oracle_check compares llmft's
ids token for token and its decode with `tokenizers`' (end-of-text rendered as "\\n").

Offline: nothing is downloaded.

usage: hf_llama_tokenizer_oracle.py --checker BPE_ORACLE_CHECK --data EXAMPLES_DATA_DIR --out DIR
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

import tokenizers
from tokenizers import (Regex, Tokenizer, decoders, models, pre_tokenizers,
                        processors, trainers)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from hf_tokenizer_oracle import HELD_OUT_TEXT, TRAIN_TEXT, paragraphs, write_text  # noqa: E402
from sentencepiece_bpe import SPACE_MARK, sentencepiece_bpe  # noqa: E402

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Held out, beyond the byte-level oracle's lines: contractions in capitals, digit runs,
# code, literal special tokens of both kinds, characters the training text never had.
MORE_HELD_OUT = """DON'T SHOUT, I'M FINE. WE'LL SEE. YOU'RE RIGHT, THEY'VE GONE, SHE'D KNOW, IT'S BOB'S
'S 'T 'RE 'Ve 'lL 'D 'm ' s 'x 'ſ \u212a'
1234567890 12 345 6789012 0.000001 3,141,592 ١٢٣٤٥ ０１２３４
for (int i = 0; i < n; ++i) {\r\n\tsum += a[i] * b[i];\r\n}\r\n    return sum;   \n
<s>begin</s>end <s> spaced </s> <|begin_of_text|>llama<|end_of_text|>three<|begin_of_text|>
 leading space, two  spaces,   three,\ttab,\t\ttabs, trailing   
\r\r\n\n\r \n \r x\u00a0\u00a0y \u2028z\u2029 \u0085 \x0b\x0c
emoji 🤖🧠 🏳️‍🌈 👩🏽‍🔬 ❤️ ✔︎ 🇯🇵 ꙮ 𝕏 Ǆǅǆ ﬃ ß ẞ İı
"""


def sentencepiece_tokenizer(corpus):
    """Llama 2's pipeline, trained; the byte tokens are in the vocabulary, not added tokens."""
    tok = sentencepiece_bpe(corpus, 1500, ["<unk>", "<s>", "</s>"], min_frequency=2)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return tok


def metaspace_variant(tok, prepend_scheme, metaspace_decoder):
    variant = Tokenizer.from_str(tok.to_str())
    variant.normalizer = None
    variant.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=SPACE_MARK, prepend_scheme=prepend_scheme, split=False)
    if metaspace_decoder:
        variant.decoder = decoders.Metaspace(replacement=SPACE_MARK, prepend_scheme=prepend_scheme,
                                             split=False)
    return variant


def llama3_tokenizer(corpus):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, min_frequency=2,
                                  special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    bos = "<|begin_of_text|>"
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, tok.token_to_id(bos))]),
    ])
    return tok


def random_mix(length, seed):
    """Seeded random text from pieces where the pre-tokenizers have choices to make."""
    pieces = ["a", "b", "s", "T", "e", "L", "D", "'", "'s", "'S", "'ll", "'RE", "'Ve", " ", "  ",
              "\t", "\n", "\r", "\r\n", "\x0b", "\u00a0", "\u3000", "\u2029", "1", "42", "12345",
              "!", ".", "?!", "\u00e9", "\u0436", "\u4e2d", "\u0661", "\U0001f600", "\u0301",
              "\u200d", "\u2581", "<s>", "</s>", "<|end_of_text|>", "<0x41>", "\u00df", "\u0130"]
    rng = random.Random(seed)
    return "".join(rng.choice(pieces) for _ in range(length))


def save(tok, directory, config):
    os.makedirs(directory)
    path = os.path.join(directory, "tokenizer.json")
    tok.save(path)
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checker", required=True, help="the bpe_oracle_check program")
    parser.add_argument("--data", required=True, help="examples/data (train.txt, val.txt)")
    parser.add_argument("--out", required=True, help="directory to write (emptied first)")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)

    with open(os.path.join(args.data, "train.txt"), encoding="utf-8", newline="") as f:
        corpus = list(paragraphs(f.read(), 10))
    corpus += list(paragraphs(TRAIN_TEXT, 3)) * 30

    sentencepiece = sentencepiece_tokenizer(corpus)
    llama2_config = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
                     "eos_token": "</s>", "unk_token": "<unk>"}
    tokenizers_under_test = {
        "sentencepiece": (sentencepiece, llama2_config, "</s>"),
        "metaspace_first": (metaspace_variant(sentencepiece, "first", True), llama2_config, "</s>"),
        "metaspace_always": (metaspace_variant(sentencepiece, "always", False),
                             dict(llama2_config, add_eos_token=True), "</s>"),
        "llama3": (llama3_tokenizer(corpus),
                   {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"},
                   "<|end_of_text|>"),
    }
    # add_eos_token in tokenizer_config.json: what transformers' Llama tokenizer then does.
    always = tokenizers_under_test["metaspace_always"][0]
    always.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", always.token_to_id("<s>")), ("</s>", always.token_to_id("</s>"))])

    texts = {}
    with open(os.path.join(args.data, "val.txt"), encoding="utf-8", newline="") as f:
        texts["val"] = f.read()
    texts["held_out"] = HELD_OUT_TEXT + MORE_HELD_OUT
    texts["random_mix"] = random_mix(100_000, seed=4321)
    for name, text in texts.items():
        write_text(os.path.join(args.out, name + ".txt"), text)

    failures = 0
    checks = 0
    compared = 0
    for kind, (tok, config, eos) in tokenizers_under_test.items():
        path = save(tok, os.path.join(args.out, kind), config)
        for text_name, text in texts.items():
            ids = tok.encode(text, add_special_tokens=False).ids
            with_special = tok.encode(text).ids
            decoded = tok.decode(ids, skip_special_tokens=False).replace(eos, "\n")
            expected = os.path.join(args.out, f"{kind}.{text_name}.{len(ids)}.ids.json")
            with open(expected, "w", encoding="utf-8") as f:
                json.dump({"tokenizers_version": tokenizers.__version__, "ids": ids,
                           "ids_with_special_tokens": with_special, "decoded": decoded}, f)
            text_file = os.path.join(args.out, text_name + ".txt")
            result = subprocess.run([args.checker, path, text_file, expected])
            failures += result.returncode != 0
            checks += 1
            compared += len(ids) + len(with_special)
    print(f"hf_llama_tokenizer_oracle: {checks - failures} of {checks} checks passed, "
          f"{compared} tokens compared with tokenizers {tokenizers.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
