#!/usr/bin/env python3
"""Makes examples/chat/model/: the tokenizer and the model config of the chat example.

A byte-level BPE of 512 entries trained on the conversations of train.jsonl (with the
`tokenizers` library), whose special tokens are ChatML's: <|im_start|> and <|im_end|>
open and close a turn, <|endoftext|> pads. tokenizer_config.json carries the chat
template (ChatML, Qwen2-style: a conversation without a system message gets the default
one) and names <|im_end|> the end-of-sequence token; config.json is a tiny Llama over
that vocabulary, which the example trains from scratch. The files are committed, so the
example needs no Python; run this only to remake them (in the project's Python
environment, which scripts/install_deps.sh --python makes):

    python examples/chat/make_tokenizer.py
"""

import json
import pathlib

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = pathlib.Path(__file__).resolve().parent
MODEL = HERE / "model"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
DEFAULT_SYSTEM = "You are a brief assistant. Answer in one short sentence."
CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] != 'system' %}"
    "{{- '<|im_start|>system\\n" + DEFAULT_SYSTEM + "<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")


def texts():
    """Every message of train.jsonl, and the role names the template writes."""
    yield "system user assistant"
    for line in (HERE / "train.jsonl").read_text(encoding="utf-8").splitlines():
        for message in json.loads(line)["messages"]:
            yield message["content"]


def main():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts(), trainers.BpeTrainer(
        vocab_size=512, special_tokens=SPECIAL, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    MODEL.mkdir(exist_ok=True)
    tok.save(str(MODEL / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": None,
              "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "chat_template": CHAT_TEMPLATE}
    (MODEL / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    model = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
             "vocab_size": tok.get_vocab_size(), "hidden_size": 128, "intermediate_size": 352,
             "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
             "max_position_embeddings": 256, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
             "tie_word_embeddings": False, "bos_token_id": None,
             "eos_token_id": tok.token_to_id("<|im_end|>"),
             "pad_token_id": None}
    (MODEL / "config.json").write_text(json.dumps(model, indent=2) + "\n")


if __name__ == "__main__":
    main()
