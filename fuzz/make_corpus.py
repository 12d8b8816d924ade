#!/usr/bin/env python3
# Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/: a handful of
# tiny valid and near-valid files per reader. Usage: python3 fuzz/make_corpus.py
import json
import os
import struct

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(root, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(root, target, name), "wb") as out:
        out.write(data)


def token_file(tokens, vocab, width=2, version=1, flags=0, mask=None, starts=None):
    header = b"LLMFTTOK" + struct.pack("<IIQII", version, width, len(tokens), vocab, flags)
    body = b"".join(t.to_bytes(width, "little") for t in tokens)
    samples = b"" if starts is None else struct.pack(f"<Q{len(starts)}Q", len(starts), *starts)
    return header + body + (bytes(mask) if mask is not None else b"") + samples


write("token_file", "v1_uint16", token_file([1, 2, 3, 65535], 65536))
write("token_file", "v1_uint32", token_file([0, 70000, 5], 70001, width=4))
write("token_file", "v2_mask", token_file([7, 8, 9], 10, version=2, flags=1, mask=[0, 1, 1]))
write("token_file", "v2_no_mask", token_file([4], 5, version=2))
write("token_file", "empty", token_file([], 1))
write("token_file", "truncated", token_file([1, 2, 3], 4)[:-1])
write("token_file", "bad_mask_byte", token_file([1, 2], 3, version=2, flags=1, mask=[1, 2]))
write("token_file", "bad_width", token_file([1], 2, width=3))
write("token_file", "v3_samples", token_file([1, 2, 3, 4, 5, 6, 7], 8, version=3, flags=2,
                                             starts=[0, 3, 4]))
write("token_file", "v3_samples_mask", token_file([1, 2, 3, 4, 5], 6, version=3, flags=3,
                                                  mask=[0, 1, 1, 0, 1], starts=[0, 2]))
write("token_file", "v3_bad_starts", token_file([1, 2, 3], 4, version=3, flags=2,
                                                starts=[0, 2, 2]))


def safetensors(header, data, pad=True):
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


two = {"__metadata__": {"format": "pt"},
       "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
       "b": {"dtype": "BF16", "shape": [2], "data_offsets": [24, 28]}}
write("safetensors", "two_tensors", safetensors(two, bytes(range(28))))
write("safetensors", "scalar_and_empty", safetensors(
    {"s": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]},
     "e": {"dtype": "U8", "shape": [0, 4], "data_offsets": [8, 8]}}, bytes(8)))
write("safetensors", "no_tensors", safetensors({}, b""))
write("safetensors", "overlap", safetensors(
    {"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
     "b": {"dtype": "F16", "shape": [2], "data_offsets": [2, 6]}}, bytes(6)))
write("safetensors", "bad_dtype", safetensors(
    {"a": {"dtype": "F7", "shape": [1], "data_offsets": [0, 1]}}, bytes(1)))
write("safetensors", "header_too_long", struct.pack("<Q", 1 << 40) + b"{}")

write("json_config", "llama3_2", json.dumps({
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 128000, "eos_token_id": [128001, 128009],
    "head_dim": 8, "hidden_act": "silu", "hidden_size": 48, "intermediate_size": 72,
    "max_position_embeddings": 512, "model_type": "llama", "num_attention_heads": 6,
    "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 256, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": True, "vocab_size": 97}))
write("json_config", "llama_linear", json.dumps({
    "architectures": ["LlamaForCausalLM"], "vocab_size": 89, "hidden_size": 40,
    "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 5,
    "max_position_embeddings": 512, "rope_scaling": {"type": "linear", "factor": 3.0}}))
write("json_config", "gpt2", json.dumps({
    "architectures": ["GPT2LMHeadModel"], "vocab_size": 101, "n_positions": 16, "n_embd": 48,
    "n_layer": 2, "n_head": 3, "n_inner": 80, "activation_function": "gelu_new",
    "layer_norm_epsilon": 1e-05, "bos_token_id": 100, "eos_token_id": 100}))
write("json_config", "gpt2_bad_heads", json.dumps({
    "model_type": "gpt2", "vocab_size": 10, "n_positions": 4, "n_embd": 10, "n_layer": 1,
    "n_head": 3}))
write("json_config", "json_syntax",
      '[null, true, false, -0.0e+5, 1E400, "\\u00e9\\ud83d\\ude00\\n", {"a": [[[]]]}, 9007199254740993]')
write("json_config", "json_bad_surrogate", '{"a": "\\udc00", "a": 1}')
write("json_config", "json_not_utf8", b'{"model_type": "gpt2", "n_embd": 8, "name": "caf\xe9"}')
write("json_config", "json_repeated_key_nested", '{"a": [{"b": 1, "c": 2, "b": 3}]}')
write("json_config", "json_nesting_513", "[" * 513 + "]" * 513)


def gpt2_byte_symbols():
    printable = [b for b in range(256) if 33 <= b <= 126 or 0xA1 <= b <= 0xAC or b >= 0xAE]
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return symbols


def byte_level_tokenizer(llama3):
    sym = gpt2_byte_symbols()
    vocab = {sym[b]: b for b in range(256)}
    merges = [[sym[ord(" ")], "t"], ["h", "e"], [sym[ord(" ")] + "t", "he"]]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    eot = "<|end_of_text|>" if llama3 else "<|endoftext|>"
    vocab[eot] = len(vocab)
    added = [{"id": vocab[eot], "content": eot, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": not llama3}
    pre = byte_level
    if llama3:
        split = {"type": "Split", "behavior": "Isolated", "invert": False, "pattern": {"Regex":
                 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                 "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}
        pre = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": llama3, "vocab": vocab, "merges": merges}
    return json.dumps({"version": "1.0", "added_tokens": added, "normalizer": None,
                       "pre_tokenizer": pre, "post_processor": byte_level,
                       "decoder": byte_level, "model": model}, ensure_ascii=False,
                      separators=(",", ":"))


def sentencepiece_tokenizer(byte_fallback):
    mark = "\u2581"
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    if byte_fallback:
        for b in range(256):
            vocab["<0x%02X>" % b] = len(vocab)
    for piece in [mark, "a", "b", "e", "l", "o", mark + "a", mark + "ab"]:
        vocab[piece] = len(vocab)
    special = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True} for t, i in [("<unk>", 0), ("<s>", 1), ("</s>", 2)]]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": byte_fallback,
             "ignore_merges": False, "vocab": vocab, "merges": [mark + " a", mark + "a b"]}
    normalizer = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": mark},
        {"type": "Replace", "pattern": {"String": " "}, "content": mark}]}
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": mark}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    post = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return json.dumps({"version": "1.0", "added_tokens": special, "normalizer": normalizer,
                       "pre_tokenizer": None, "post_processor": post, "decoder": decoder,
                       "model": model}, ensure_ascii=False, separators=(",", ":"))


def metaspace_tokenizer():
    spec = json.loads(sentencepiece_tokenizer(False))
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                 "split": False}
    spec["normalizer"] = None
    spec["pre_tokenizer"] = metaspace
    spec["decoder"] = metaspace
    return json.dumps(spec, ensure_ascii=False, separators=(",", ":"))


write("tokenizer", "gpt2", byte_level_tokenizer(False))
write("tokenizer", "llama3", byte_level_tokenizer(True))
write("tokenizer", "llama2_byte_fallback", sentencepiece_tokenizer(True))
write("tokenizer", "metaspace", metaspace_tokenizer())
write("tokenizer", "wordpiece", '{"model": {"type": "WordPiece", "vocab": {"a": 0}}}')

write("prepare", "text_lines", '{"text": "hello"}\n\n{"text": "w\\u00f6rld \\ud83d\\ude00", "id": 3}\n')
write("prepare", "prompt_response",
      '{"prompt": "Q: 2+2?", "response": " 4"}\r\n{"text": "plain"}\n')
write("prepare", "both_forms", '{"text": "a", "prompt": "b", "response": "c"}\n')
write("prepare", "not_object", '["text"]\n{"text": 1}\n')
write("prepare", "blank_only", " \t\r\n\n")
write("prepare", "no_newline_at_end", '{"text": ""}\n{"prompt": "", "response": "x"}')
