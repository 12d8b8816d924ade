"""Oracle for llmft's byte-level BPE tokenizer: Hugging Face `tokenizers` says what the ids are.

Trains a GPT-2-style byte-level BPE (vocabulary 2000, special token <|endoftext|>) on the
bundled King James text plus the multilingual text below, saves it both as tokenizer.json
and as vocab.json + merges.txt, encodes held-out text with `tokenizers` (the bundled
val.txt, multilingual lines that were not trained on, and seeded random text from pieces
where the pre-tokenizer's regex has choices to make), and has bpe_oracle_check compare
llmft's encoding token for token, in both file forms.

A second, "probe" tokenizer checks the pre-tokenizer's Unicode classes at every code point
of planes 0-3 (and every 101st above): its merges join a character X to the letter before
it, to the "!" after it and to the digit before it, so in the text "aX!1X" per code point
the ids show whether X is a letter, a number, other or white space to the regex.

Offline: nothing is downloaded.

usage: hf_tokenizer_oracle.py --checker BPE_ORACLE_CHECK --data EXAMPLES_DATA_DIR --out DIR
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

import tokenizers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

EOT = "<|endoftext|>"

# Trained on. Several languages and scripts, digits inside words, contractions, emoji, and
# white space of every kind: runs of spaces, tabs, CRLF, trailing blanks.
TRAIN_TEXT = """Der schnelle braune Fuchs springt über den faulen Hund. Übermäßig große Straßenschilder ärgern die Bürger.
Im Frühling blühen die Blumen, und die Vögel singen fröhlich in den Bäumen.
L'été dernier, nous sommes allés à la plage où l'eau était très chaude.
Ça m'a coûté cher, mais c'était génial ! Qu'est-ce que tu en penses ?
Съешь же ещё этих мягких французских булок, да выпей чаю.
Москва — столица России, и в ней живёт более двенадцати миллионов человек.
Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.
我们今天去公园散步，天气非常好。北京是中国的首都，有三千多年的历史。
いろはにほへと ちりぬるを。東京は日本の首都です。カタカナとひらがなを混ぜて書きます。
اللغة العربية جميلة جدا، ويتحدث بها أكثر من ٤٠٠ مليون شخص.
हिन्दी भारत की राजभाषा है। मैं १२३ किताबें पढ़ चुका हूँ।
안녕하세요, 만나서 반갑습니다. 오늘 날씨가 좋네요.
I love pizza 🍕🍕 and the 👨‍👩‍👧‍👦 family emoji, flags 🇩🇪🇫🇷, thumbs 👍🏽!
abc123def 3.14159 1,000,000 version2.0beta x86_64 0xDEADBEEF 2024-06-01T12:30:00Z ½ ² Ⅻ １２３
I'm sure you're right, we've seen they'll come; don't DON'T I'M it's Bob's 'quoted' ''double''
a    b\t\tc \t d  \n\n\n   e   \r\nline with CRLF\r\ntrailing spaces   \nnbsp\u00a0here\u3000ideographic\u2009thin
def f(x):\n    return x**2  # square\n\tif (a&&b) { c += 1; }\n\n
"""

# Not trained on: other sentences in the same scripts, odd white space, a literal
# end-of-text token between two documents, control and zero-width characters.
HELD_OUT_TEXT = """Die Wissenschaftlerin veröffentlichte ihre Ergebnisse in einer Fachzeitschrift für Physik.
Les élèves ont préparé une présentation sur l'histoire de la Révolution française.
Вчера шёл сильный дождь, поэтому мы остались дома и читали книги.
Το πρωί πίνω καφέ και διαβάζω την εφημερίδα στο μπαλκόνι.
这个城市的交通很方便，地铁可以到达每个角落。
昨日は雨が降ったので、家で映画を見ました。ラーメンが大好きです。
ذهبت إلى السوق واشتريت الخبز والحليب في الساعة ٧:٣٠ صباحا.
कल हम दिल्ली से आगरा गए और ताजमहल देखा।
Great job 🎉🎉🎉 — see you at 5pm 🕔 😂😂 🧑🏿‍💻
Room 42B, call +49 (0)30 1234-5678, pay €1.299,99 or $1,299.99; H2O CO₂ 10km 3rd 21st ٢٠٢٤ ४५६
She'll say we'd've known; You'RE 'S 'sup o'clock rock'n'roll
first document ends here.<|endoftext|>Second document starts here.<|endoftext|><|endoftext|>
  leading spaces\n\n\ttab start\n \n\t \n end with tabs\t\t\nmixed \u00a0 \u2003 spaces\r\n\r\nwindows\rold mac
\x00\x01\x1f control chars \u200b\u200d zero widths, combining e\u0301 vs é, Ångström, ﬁ ligature, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, 𓀀.
trailing   """


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def paragraphs(text, lines_per_paragraph):
    lines = text.splitlines(keepends=True)
    for i in range(0, len(lines), lines_per_paragraph):
        yield "".join(lines[i : i + lines_per_paragraph])


def byte_level_bpe(model):
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def train_tokenizer(data_dir):
    with open(os.path.join(data_dir, "train.txt"), encoding="utf-8", newline="") as f:
        corpus = list(paragraphs(f.read(), 10))
    corpus += list(paragraphs(TRAIN_TEXT, 3)) * 30
    tok = byte_level_bpe(models.BPE())
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        min_frequency=2,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return tok


def probe_tokenizer():
    """Merges that join a character's bytes to an "a" before, a "!" after, a "1" before."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {EOT: 0}
    for symbol in alphabet:
        vocab[symbol] = len(vocab)
    merges = []
    for symbol in alphabet:
        for pair in (("a", symbol), (symbol, "!"), ("1", symbol)):
            if pair not in merges:
                merges.append(pair)
                vocab.setdefault(pair[0] + pair[1], len(vocab))
    tok = byte_level_bpe(models.BPE(vocab=vocab, merges=merges))
    tok.add_special_tokens([EOT])
    return tok


def code_point_sweep():
    code_points = [c for c in range(0x40000) if not 0xD800 <= c <= 0xDFFF]
    code_points += range(0x40000, 0x110000, 101)
    return "".join(f"a{chr(c)}!1{chr(c)}\n" for c in code_points)


def random_mix(length):
    """Seeded random text from pieces where the pre-tokenizer's regex has choices to make."""
    pieces = ["a", "b", "s", "t", "e", "l", "S", "'", "'s", "'ll", "'re", "'ve", " ", "  ", "\t",
              "\n", "\r\n", "\x0b", "\x1c", "\u00a0", "\u3000", "\u2029", "1", "42", "!", ".",
              "\u00e9", "\u0436", "\u4e2d", "\u0661", "\U0001f600", "\u0301", "\u200d"]
    rng = random.Random(1234)
    return "".join(rng.choice(pieces) for _ in range(length))


def legacy_merges_copy(tokenizer_json, out_path):
    """The same tokenizer.json with merges as "a b" strings, as older `tokenizers` wrote."""
    with open(tokenizer_json, encoding="utf-8") as f:
        config = json.load(f)
    config["model"]["merges"] = [" ".join(pair) for pair in config["model"]["merges"]]
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checker", required=True, help="the bpe_oracle_check program")
    parser.add_argument("--data", required=True, help="examples/data (train.txt, val.txt)")
    parser.add_argument("--out", required=True, help="directory to write (emptied first)")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    trained_dir = os.path.join(args.out, "trained")
    gpt2_dir = os.path.join(args.out, "gpt2_files")
    legacy_dir = os.path.join(args.out, "legacy")
    probe_dir = os.path.join(args.out, "probe")
    for d in (trained_dir, gpt2_dir, legacy_dir, probe_dir):
        os.makedirs(d)

    trained = train_tokenizer(args.data)
    trained.save(os.path.join(trained_dir, "tokenizer.json"))
    trained.model.save(gpt2_dir)  # vocab.json + merges.txt
    with open(os.path.join(gpt2_dir, "merges.txt"), encoding="utf-8") as f:
        assert f.readline().startswith("#version"), "merges.txt should start with #version"
    legacy_json = os.path.join(legacy_dir, "tokenizer.json")
    legacy_merges_copy(os.path.join(trained_dir, "tokenizer.json"), legacy_json)
    probe = probe_tokenizer()
    probe.save(os.path.join(probe_dir, "tokenizer.json"))

    texts = {}
    with open(os.path.join(args.data, "val.txt"), encoding="utf-8", newline="") as f:
        texts["val"] = f.read()
    texts["held_out_multilingual"] = HELD_OUT_TEXT
    texts["random_mix"] = random_mix(200_000)
    texts["code_point_sweep"] = code_point_sweep()
    for name, text in texts.items():
        write_text(os.path.join(args.out, name + ".txt"), text)

    # (llmft tokenizer spec, the `tokenizers` object it must agree with, text)
    checks = [
        (os.path.join(trained_dir, "tokenizer.json"), trained, "val"),
        (os.path.join(trained_dir, "tokenizer.json"), trained, "held_out_multilingual"),
        ("bpe:" + gpt2_dir, trained, "val"),
        (os.path.join(gpt2_dir, "vocab.json"), trained, "held_out_multilingual"),
        (legacy_json, Tokenizer.from_file(legacy_json), "held_out_multilingual"),
        (os.path.join(trained_dir, "tokenizer.json"), trained, "random_mix"),
        (os.path.join(probe_dir, "tokenizer.json"), probe, "code_point_sweep"),
    ]
    failures = 0
    compared = 0
    for spec, hf_tokenizer, text_name in checks:
        ids = hf_tokenizer.encode(texts[text_name]).ids
        expected = os.path.join(args.out, f"{text_name}.{len(ids)}.ids.json")
        with open(expected, "w") as f:
            json.dump({"tokenizers_version": tokenizers.__version__, "ids": ids}, f)
        text_file = os.path.join(args.out, text_name + ".txt")
        result = subprocess.run([args.checker, spec, text_file, expected])
        failures += result.returncode != 0
        compared += len(ids)
    print(f"hf_tokenizer_oracle: {len(checks) - failures} of {len(checks)} checks passed, "
          f"{compared} tokens compared with tokenizers {tokenizers.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
