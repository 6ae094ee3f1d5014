#!/usr/bin/env python3
"""Writes the seed corpus of the npy fuzz target (fuzz/corpus/npy/) with the standard library
only: valid files of several dtypes and shapes as NumPy writes them (format 1, header padded to a
multiple of 64 bytes and ended by a newline), format 2 and 3 headers, and bad files (Fortran
order, big-endian, truncated data, a header without 'descr', a header longer than the file)."""
import os
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "npy")


def header(descr, shape, fortran=False):
    shape_text = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) > 1:
        shape_text = shape_text.replace(",)", ")")
    return f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"


def npy(dict_text, data, version=1):
    prefix = 10 if version == 1 else 12
    text = dict_text
    while (prefix + len(text) + 1) % 64:
        text += " "
    text += "\n"
    raw = text.encode("latin1" if version < 3 else "utf8")
    size = struct.pack("<H", len(raw)) if version == 1 else struct.pack("<I", len(raw))
    return b"\x93NUMPY" + bytes([version, 0]) + size + raw + data


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def values(fmt, shape):
    return b"".join(struct.pack(fmt, i % 7) for i in range(count(shape)))


FILES = {
    "f4_2x3.npy": npy(header("<f4", (2, 3)), values("<f", (2, 3))),
    "f8_scalar.npy": npy(header("<f8", ()), values("<d", ())),
    "f2_3.npy": npy(header("<f2", (3,)), values("<e", (3,))),
    "i4_5.npy": npy(header("<i4", (5,)), values("<i", (5,))),
    "i8_0x4.npy": npy(header("<i8", (0, 4)), b""),
    "u1_2x2x3.npy": npy(header("|u1", (2, 2, 3)), values("B", (2, 2, 3))),
    "b1_4.npy": npy(header("|b1", (4,)), bytes([1, 0, 0, 1])),
    "v2_f4_3.npy": npy(header("<f4", (3,)), values("<f", (3,)), version=2),
    "v3_i4_2.npy": npy(header("<i4", (2,)), values("<i", (2,)), version=3),
    "fortran_f4_2x3.npy": npy(header("<f4", (2, 3), fortran=True), values("<f", (2, 3))),
    "big_endian_f4_2.npy": npy(header(">f4", (2,)), values(">f", (2,))),
    "truncated_data.npy": npy(header("<f8", (4,)), values("<d", (4,))[:13]),
    "truncated_header.npy": npy(header("<f4", (2, 3)), b"")[:40],
    "no_descr.npy": npy("{'fortran_order': False, 'shape': (1,), }", values("<f", (1,))),
    "bad_shape.npy": npy(header("<f4", (2, 3)).replace("(2, 3)", "(2, x)"), values("<f", (2, 3))),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in FILES.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(FILES)} files to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
