"""Oracle for `llmft prepare` on conversations: transformers' apply_chat_template says the ids.

For five chat-template families whose template texts are public (Llama 3 instruct, ChatML as
Qwen2 writes it with its default system prompt, plain ChatML, Zephyr/TinyLlama, Mistral
[INST]) a small tokenizer is trained with `tokenizers` (byte-level BPE for Llama 3 and
ChatML, SentencePiece-style BPE for Zephyr and Mistral) with the family's special tokens
added, and saved with tokenizer_config.json holding the bos/eos tokens; the template is
found each of the four ways llmft looks (a string in tokenizer_config.json, a list of named
templates there, chat_template.jinja beside it, --chat-template). `llmft prepare` writes a
token file of several multi-turn conversations (with and without a system message, Unicode,
ShareGPT's spelling, content the template trims), and for each sample:
  - the ids must equal apply_chat_template(messages, tokenize=True) exactly;
  - the loss mask must equal an independent construction: for each assistant message i,
    messages[:i] rendered with add_generation_prompt=True and messages[:i+1] rendered
    without are tokenized by transformers; the tokens of the second past their common
    prefix are the turn, cut after the first added token among them (the end-of-turn
    token: <|eot_id|>, <|im_end|>, </s>). What follows that token (ChatML's and Zephyr's
    "\\n") is not part of the turn here, as llmft does not train it either.
Then the one-line errors: a template Jinja cannot parse, one that calls raise_exception,
one that reads an undefined attribute, and a Python without Jinja2.

usage: chat_template_oracle.py LLMFT OUT_DIR
"""

import json
import os
import shutil
import struct
import subprocess
import sys

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoTokenizer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from sentencepiece_bpe import sentencepiece_bpe  # noqa: E402

LLAMA3 = ("{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
          "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim "
          "+ '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
          "{{ content }}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
QWEN2 = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
         "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
         "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
         "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
          " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|im_start|>assistant\n' }}{% endif %}")
ZEPHYR = ("{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + "
          "message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' "
          "+ message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n"
          "{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n"
          "{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}")
MISTRAL = ("{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
           "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
           "user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}"
           "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
           "{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant "
           "roles are supported!') }}{% endif %}{% endfor %}")

CONVERSATIONS = [
    [{"role": "user", "content": "Hello there!"},
     {"role": "assistant", "content": "Hi! How can I help you today?"}],
    [{"role": "system", "content": "You are a terse assistant."},
     {"role": "user", "content": "What is 2+2?"},
     {"role": "assistant", "content": "4."},
     {"role": "user", "content": "And 3+3?"},
     {"role": "assistant", "content": "6, of course."}],
    [{"role": "user", "content": "Translate 'good morning' to German."},
     {"role": "assistant", "content": "Guten Morgen \u2014 sch\u00f6nen Tag! \u2600\ufe0f"},
     {"role": "user", "content": "Und auf Japanisch?"},
     {"role": "assistant", "content": "\u304a\u306f\u3088\u3046\u3054\u3056\u3044\u307e\u3059\u3002"}],
    [{"role": "user", "content": "  a question with spaces around  "},
     {"role": "assistant", "content": "  an answer with spaces around \n"},
     {"role": "user", "content": "Say hello."},
     {"role": "assistant", "content": "hello"}],
    [{"role": "system", "content": "Answer in one word."},
     {"role": "user", "content": "Name a color."},
     {"role": "assistant", "content": "Blue."}],
    # Replies that also occur in the role headers and markers before them
    # ("<|im_start|>assistant", "<|end_header_id|>", "[/INST]").
    [{"role": "user", "content": "Which letter starts apple?"},
     {"role": "assistant", "content": "a"},
     {"role": "user", "content": "And dog?"},
     {"role": "assistant", "content": "d"},
     {"role": "user", "content": "A pronoun for me?"},
     {"role": "assistant", "content": "I"}],
]

CORPUS = [
    "Hello there! Hi! How can I help you today? What is 2+2? And 3+3? 6, of course.",
    "You are a terse assistant. You are a helpful assistant. Answer in one word.",
    "Translate good morning to German. Guten Morgen, sch\u00f6nen Tag! Und auf Japanisch?",
    "a question with spaces around, an answer with spaces around. Say hello. Name a color. Blue.",
    "user assistant system INST the quick brown fox jumps over the lazy dog",
] * 3

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_level(special, llama3_split):
    tok = Tokenizer(models.BPE(ignore_merges=llama3_split))
    if llama3_split:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=400, special_tokens=special, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def sentencepiece(special):
    return sentencepiece_bpe(CORPUS, 500, special)


# name, tokenizer, bos, eos, template, where the template goes, conversations it takes
FAMILIES = [
    ("llama3", lambda: byte_level(["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                   "<|end_header_id|>", "<|eot_id|>"], True),
     "<|begin_of_text|>", "<|eot_id|>", LLAMA3, "config", CONVERSATIONS),
    ("qwen2_chatml", lambda: byte_level(["<|endoftext|>", "<|im_start|>", "<|im_end|>"], False),
     None, "<|im_end|>", QWEN2, "jinja_file", CONVERSATIONS),
    ("chatml", lambda: byte_level(["<|endoftext|>", "<|im_start|>", "<|im_end|>"], False),
     None, "<|endoftext|>", CHATML, "config", CONVERSATIONS),
    ("zephyr", lambda: sentencepiece(["<unk>", "<s>", "</s>"]),
     "<s>", "</s>", ZEPHYR, "config_list", CONVERSATIONS),
    ("mistral", lambda: sentencepiece(["<unk>", "<s>", "</s>"]),
     "<s>", "</s>", MISTRAL, "option", [c for c in CONVERSATIONS if c[0]["role"] != "system"]),
]


def read_token_file(path):
    """Tokens, loss mask (None without one) and sample starts of an llmft token file."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"LLMFTTOK", path
    version, width, count, _vocab, flags = struct.unpack_from("<IIQII", data, 8)
    offset = 32
    tokens = list(struct.unpack_from("<%d%s" % (count, "H" if width == 2 else "I"), data, offset))
    offset += count * width
    mask = None
    if flags & 1:
        mask = list(data[offset:offset + count])
        offset += count
    starts = []
    if flags & 2:
        (samples,) = struct.unpack_from("<Q", data, offset)
        starts = list(struct.unpack_from("<%dQ" % samples, data, offset + 8))
    return tokens, mask, starts, version


def expected_mask(tok, messages, template, ids):
    """0/1 per token of `ids`: the assistant turns found by rendering conversation prefixes."""
    added = set(tok.added_tokens_decoder)
    mask = [0] * len(ids)
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = tok.apply_chat_template(messages[:i], chat_template=template, tokenize=True,
                                         add_generation_prompt=True, return_dict=False)
        through = tok.apply_chat_template(messages[:i + 1], chat_template=template, tokenize=True,
                                          return_dict=False)
        assert ids[:len(through)] == through, "rendering is not prefix-stable"
        k = 0
        while k < min(len(before), len(through)) and before[k] == through[k]:
            k += 1
        end = k
        while end < len(through) and through[end] not in added:
            end += 1
        assert end < len(through), f"no end-of-turn token after assistant message {i + 1}"
        for j in range(k, end + 1):
            mask[j] = 1
    return mask


def run(llmft, args, python=sys.executable):
    env = dict(os.environ, LLMFT_PYTHON=python)
    return subprocess.run([llmft, "prepare"] + args, capture_output=True, text=True, env=env)


def write_jsonl(path, conversations):
    with open(path, "w", encoding="utf-8") as f:
        for n, messages in enumerate(conversations):
            if n == len(conversations) - 1:  # the last one in ShareGPT's spelling
                names = {"user": "human", "assistant": "gpt", "system": "system"}
                row = {"conversations": [{"from": names[m["role"]], "value": m["content"]}
                                         for m in messages]}
            else:
                row = {"messages": messages}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def check_family(llmft, out, name, make, bos, eos, template, where, conversations):
    directory = os.path.join(out, name)
    os.makedirs(directory)
    make().save(os.path.join(directory, "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos, "bos_token": bos,
              "unk_token": "<unk>" if bos == "<s>" else None}
    if where == "config":
        config["chat_template"] = template
    elif where == "config_list":
        config["chat_template"] = [{"name": "tool_use", "template": "{{ raise_exception('no') }}"},
                                   {"name": "default", "template": template}]
    elif where == "jinja_file":
        with open(os.path.join(directory, "chat_template.jinja"), "w", encoding="utf-8") as f:
            f.write(template)
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    data = os.path.join(out, name + ".jsonl")
    write_jsonl(data, conversations)
    args = ["--input", data, "--output", os.path.join(out, name + ".tok"), "--tokenizer", directory]
    if where == "option":
        option_file = os.path.join(out, name + ".jinja")
        with open(option_file, "w", encoding="utf-8") as f:
            f.write(template)
        args += ["--chat-template", option_file]
    result = run(llmft, args)
    assert result.returncode == 0, f"{name}: llmft prepare failed: {result.stderr}"
    print(f"{name}: {result.stdout.strip()}")
    tokens, mask, starts, _ = read_token_file(os.path.join(out, name + ".tok"))
    tok = AutoTokenizer.from_pretrained(directory)
    assert len(starts) == len(conversations), f"{name}: {len(starts)} samples"
    bounds = starts + [len(tokens)]
    for n, messages in enumerate(conversations):
        ids = tokens[bounds[n]:bounds[n + 1]]
        want = tok.apply_chat_template(messages, chat_template=template, tokenize=True,
                                       return_dict=False)
        assert ids == want, f"{name} conversation {n + 1}: ids\n llmft {ids}\n hf    {want}"
        got_mask = mask[bounds[n]:bounds[n + 1]]
        want_mask = expected_mask(tok, messages, template, want)
        assert got_mask == want_mask, (f"{name} conversation {n + 1}: mask\n llmft {got_mask}\n"
                                       f" hf    {want_mask}\n tokens {tok.convert_ids_to_tokens(want)}")
    print(f"{name}: {len(conversations)} conversations, ids and masks equal transformers'")


def check_errors(llmft, out):
    data = os.path.join(out, "errors.jsonl")
    write_jsonl(data, CONVERSATIONS[:2])
    cases = [
        ("syntax", "{% for m in messages %}\n{{ m.content }\n{% endfor %}", "line 2"),
        ("raise", "{{ raise_exception('Only user and assistant roles are supported!') }}",
         "Only user and assistant roles are supported!"),
        ("undefined", "{% for m in messages %}{{ m.content.nope.deeper }}{% endfor %}", "nope"),
    ]
    for case, template, expected in cases:
        path = os.path.join(out, case + ".jinja")
        with open(path, "w", encoding="utf-8") as f:
            f.write(template)
        result = run(llmft, ["--input", data, "--output", os.path.join(out, "errors.tok"),
                             "--chat-template", path])
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 1 and len(lines) == 1, f"{case}: {result.stderr!r}"
        assert path in lines[0] and expected in lines[0], f"{case}: {lines[0]}"
        print(f"error {case}: {lines[0]}")
    # A Python without Jinja2: a wrapper that makes `import jinja2` fail.
    wrapper = os.path.join(out, "python_without_jinja")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec '%s' -c \"import sys; sys.modules['jinja2'] = None; "
                "exec(sys.argv[1])\" \"$2\"\n" % sys.executable)
    os.chmod(wrapper, 0o755)
    result = run(llmft, ["--input", data, "--output", os.path.join(out, "errors.tok"),
                         "--chat-template", os.path.join(out, "raise.jinja")], python=wrapper)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "python3-jinja2" in lines[0], result.stderr
    print(f"error no jinja: {lines[0]}")
    assert not os.path.exists(os.path.join(out, "errors.tok")), "an error left a token file"


def main():
    llmft, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for family in FAMILIES:
        check_family(llmft, out, *family)
    check_errors(llmft, out)
    print("chat template oracle: all checks passed")


if __name__ == "__main__":
    main()
