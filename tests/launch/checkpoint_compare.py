"""Two llmft checkpoints hold the same training state, read with h5py (an independent
HDF5 reader): the same datasets, bit for bit, with Fletcher32 checksums and a dtype
attribute each, and the same progress attributes.

usage: checkpoint_compare.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np

# Attributes that may differ between two checkpoints of one state.
WHERE_WRITTEN = {"layout", "llmft_version"}


def datasets(f):
    names = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return sorted(names)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        problems = []
        if text(a.attrs["complete"]) != "1" or text(b.attrs["complete"]) != "1":
            problems.append("a checkpoint lacks its complete mark")
        for key in sorted(set(a.attrs) | set(b.attrs)):
            if key in WHERE_WRITTEN:
                continue
            if key not in a.attrs or key not in b.attrs or text(a.attrs[key]) != text(b.attrs[key]):
                problems.append(f"attribute {key}: {a.attrs.get(key)} vs {b.attrs.get(key)}")
        names = datasets(a)
        if names != datasets(b):
            problems.append("the files hold different datasets")
        for name in names:
            x, y = a[name], b[name]
            if not x.fletcher32 or "dtype" not in x.attrs:
                problems.append(f"{name}: no Fletcher32 checksum or no dtype attribute")
            if x.shape != y.shape or not np.array_equal(x[()].view(np.uint8), y[()].view(np.uint8)):
                problems.append(f"{name}: the values differ")
        for p in problems[:20]:
            print(f"FAILED: {a_path} vs {b_path}: {p}")
        if problems:
            sys.exit(1)
        print(f"h5py: {len(names)} datasets and {len(a.attrs)} attributes identical "
              f"(step {text(a.attrs['step'])}, {text(a.attrs['optimizer'])}, {text(a.attrs['dtype'])})")


if __name__ == "__main__":
    main()
