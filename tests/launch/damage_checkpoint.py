"""Damages an llmft checkpoint the ways that Fletcher32 does not catch, so that a test can
check that llmft refuses to restore it (tests/launch/checkpoint_damage.sh).

usage: damage_checkpoint.py FILE values
         rewrites one element of the first f32 weights through h5py, which recomputes the
         chunk's Fletcher32 checksum: the file is valid HDF5 holding a changed value
       damage_checkpoint.py FILE byte-order
         flips the byte-order bit of the first little-endian 32-bit float datatype message in
         the file (a dataset's stored type): HDF5 then converts the stored bytes on reading
       damage_checkpoint.py FILE attribute NAME VALUE
         replaces a root attribute with VALUE as a fixed-length string, as llmft writes them
Prints what it changed.
"""
import sys

import h5py
import numpy as np

# HDF5's datatype message of an IEEE little-endian binary32: version 1 and class 1
# (floating point), bit field 0x20 0x1f 0x00 (byte order bit 0 = little-endian, implied
# mantissa bit, sign at bit 31), size 4.
FLOAT32_LE = bytes([0x11, 0x20, 0x1F, 0x00, 0x04, 0x00, 0x00, 0x00])


def first_f32_weights(f):
    """The first f32 dataset of the weights, which every restore reads (export too)."""
    found = []
    f.visititems(lambda name, obj: found.append(name)
                 if isinstance(obj, h5py.Dataset) and obj.dtype == np.float32
                 and name.startswith("weights/") else None)
    return sorted(found)[0]


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "values":
        with h5py.File(path, "r+") as f:
            name = first_f32_weights(f)
            dataset = f[name]
            first = np.array(dataset[(0,) * dataset.ndim], dtype=np.float32)
            dataset[(0,) * dataset.ndim] = first + np.float32(1.0)
            print(f"changed the first element of {name} from {first} to {first + 1}")
    elif mode == "byte-order":
        data = bytearray(open(path, "rb").read())
        at = data.find(FLOAT32_LE)
        if at < 0:
            sys.exit("no little-endian float32 datatype message found")
        data[at + 1] |= 0x01
        open(path, "wb").write(bytes(data))
        print(f"flipped the byte order of the float32 datatype message at offset {at}")
    elif mode == "attribute":
        name, value = sys.argv[3], sys.argv[4]
        with h5py.File(path, "r+") as f:
            del f.attrs[name]
            f.attrs.create(name, np.bytes_(value.encode()))
        print(f"set attribute {name} to {value!r}")
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
