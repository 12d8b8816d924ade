"""A small Llama 2 / Mistral-style SentencePiece BPE trained with the `tokenizers` library,
for the oracle tests: spaces become U+2581 with one prepended, bytes the model lacks fall
back to <0xNN> tokens (in the vocabulary, not added tokens), decoded back to text."""

import json

from tokenizers import Tokenizer, decoders, models, normalizers, trainers

SPACE_MARK = "\u2581"


def sentencepiece_bpe(corpus, vocab_size, special, min_frequency=0):
    """Trained on the texts of `corpus`; `special` tokens first (ids 0, 1, ...)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend(SPACE_MARK), normalizers.Replace(" ", SPACE_MARK)])
    tok.decoder = decoders.Sequence([decoders.Replace(SPACE_MARK, " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    tok.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special + byte_tokens,
        show_progress=False))
    config = json.loads(tok.to_str())
    config["added_tokens"] = [t for t in config["added_tokens"] if t["content"] not in byte_tokens]
    return Tokenizer.from_str(json.dumps(config))
