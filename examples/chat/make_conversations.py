#!/usr/bin/env python3
"""Makes train.jsonl and val.jsonl, a small conversation set written for this project.

Every line is {"messages": [{"role": ..., "content": ...}, ...]}: some start with a
system message, some have two user/assistant exchanges. The tasks are short, so that a
tiny model learns both the answers and where a reply ends:

  add        "What is 3 plus 4?"                  ->  "3 plus 4 is 7."
  double     "Pick a number from 1 to 9." / "Double it."  ->  "6." / "12."
  begin      "How does Genesis 1:3 begin?"        ->  its first four words
  book       "Which book comes after Genesis?"    ->  "Exodus."

The verses are the public-domain King James text of examples/data/train.txt. The output
depends only on that file; one line in nine goes to val.jsonl. Standard library only:

    python3 examples/chat/make_conversations.py   # writes examples/chat/{train,val}.jsonl
"""

import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
VERSES = HERE.parent / "data" / "train.txt"
GENESIS_CHAPTERS = 50
SYSTEM = "You are a brief assistant. Answer in one short sentence."
BOOKS = ["Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy"]
CONVERSATIONS = 300


def genesis_verses():
    """(chapter, verse number, text) for the verses of Genesis in train.txt."""
    text = VERSES.read_text(encoding="utf-8").strip("\n")
    for index, chapter_text in enumerate(text.split("\n\n")[:GENESIS_CHAPTERS]):
        for number, verse in enumerate(chapter_text.split("\n"), start=1):
            yield index + 1, number, verse


def turn(role, content):
    return {"role": role, "content": content}


def conversation(i, verses):
    """The i-th conversation: its task taken in turn, its numbers from i."""
    kind, k = i % 4, i // 4
    a, b = k % 10, (k // 10 + 3 * k + 1) % 10
    if kind == 0:
        messages = [turn("user", f"What is {a} plus {b}?"),
                    turn("assistant", f"{a} plus {b} is {a + b}.")]
    elif kind == 1:
        messages = [turn("user", "Pick a number from 1 to 9."), turn("assistant", f"{b or 5}."),
                    turn("user", "Double it."), turn("assistant", f"{2 * (b or 5)}.")]
    elif kind == 2:
        chapter, number, verse = verses[(k * 13) % len(verses)]
        messages = [turn("user", f"How does Genesis {chapter}:{number} begin?"),
                    turn("assistant", " ".join(verse.split(" ")[:4]))]
    else:
        k = k % (len(BOOKS) - 1)
        messages = [turn("user", f"Which book comes after {BOOKS[k]}?"),
                    turn("assistant", f"{BOOKS[k + 1]}.")]
    if i % 3 == 0:
        messages.insert(0, turn("system", SYSTEM))
    return {"messages": messages}


def main():
    verses = list(genesis_verses())
    train, val = [], []
    for i in range(CONVERSATIONS):
        line = json.dumps(conversation(i, verses), ensure_ascii=False) + "\n"
        (val if i % 9 == 8 else train).append(line)
    (HERE / "train.jsonl").write_text("".join(train), encoding="utf-8")
    (HERE / "val.jsonl").write_text("".join(val), encoding="utf-8")


if __name__ == "__main__":
    main()
