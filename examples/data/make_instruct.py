#!/usr/bin/env python3
"""Makes instruct.jsonl, a small instruction-tuning set, from train.txt.

train.txt holds Genesis 1 to Exodus 31 of the King James Version, one verse per line
and a blank line between chapters, so a verse's book, chapter and number follow from
its position. Every STRIDE-th verse becomes one {"prompt": ..., "response": ...} line,
the kinds of task taking turns:

  continue  "Continue the verse: <first half of its words>"  ->  " <second half>"
  recite    "Recite Genesis 1:1.\n"                          ->  the verse
  locate    "Which book and chapter is this verse from? <verse>\n"  ->  "Genesis 1"

The output depends only on train.txt. Standard library only:

    python3 examples/data/make_instruct.py   # writes examples/data/instruct.jsonl
"""

import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
GENESIS_CHAPTERS = 50  # train.txt's first 50 chapters are Genesis, the rest Exodus
STRIDE = 8
MIN_WORDS_TO_SPLIT = 6


def verses(text):
    """Yields (book, chapter, verse number, verse text) for every verse of train.txt."""
    for index, chapter_text in enumerate(text.strip("\n").split("\n\n")):
        if index < GENESIS_CHAPTERS:
            book, chapter = "Genesis", index + 1
        else:
            book, chapter = "Exodus", index - GENESIS_CHAPTERS + 1
        for number, verse in enumerate(chapter_text.split("\n"), start=1):
            yield book, chapter, number, verse


def example(kind, book, chapter, number, verse):
    """The prompt and response of one task of `kind` about one verse."""
    words = verse.split(" ")
    if kind == "continue" and len(words) >= MIN_WORDS_TO_SPLIT:
        half = len(words) // 2
        return "Continue the verse: " + " ".join(words[:half]), " " + " ".join(words[half:])
    if kind == "locate":
        return "Which book and chapter is this verse from? " + verse + "\n", f"{book} {chapter}"
    return f"Recite {book} {chapter}:{number}.\n", verse


def main():
    text = (HERE / "train.txt").read_text(encoding="utf-8")
    kinds = ["continue", "recite", "locate"]
    lines = []
    for position, (book, chapter, number, verse) in enumerate(verses(text)):
        if position % STRIDE != 0:
            continue
        kind = kinds[(position // STRIDE) % len(kinds)]
        prompt, response = example(kind, book, chapter, number, verse)
        lines.append(json.dumps({"prompt": prompt, "response": response}) + "\n")
    (HERE / "instruct.jsonl").write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
