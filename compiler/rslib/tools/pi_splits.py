#!/usr/bin/python3
"""Derives the pi/2 splits used by the Cody-Waite reductions in compiler/rslib/math_trig.c and math_native.c.

pi comes from Machin's formula in exact rational arithmetic (no digits copied from anywhere).
Run: /usr/bin/python3 pi_splits.py
"""
from fractions import Fraction


def arctan_inv(n, terms):
    s, p = Fraction(0), Fraction(1, n)
    for k in range(terms):
        s += (-1) ** k * p / (2 * k + 1)
        p /= n * n
    return s


PI = 16 * arctan_inv(5, 120) - 4 * arctan_inv(239, 40)  # ~ 170 correct decimal digits


def split(value, bits, parts):
    """Splits value into parts; each but the last has `bits` significant bits, the last 53."""
    out, rest = [], value
    for i in range(parts):
        b = bits if i < parts - 1 else (24 if bits == 12 else 53)
        e = 0
        while abs(rest) * 2 ** e < 2 ** (b - 1):
            e += 1
        while abs(rest) * 2 ** e >= 2 ** b:
            e -= 1
        q = round(rest * 2 ** e)
        out.append(Fraction(q, 2 ** e) if e >= 0 else Fraction(q * 2 ** (-e)))
        rest -= out[-1]
    return out


if __name__ == "__main__":
    for name, v in (("pi/2", PI / 2),):
        print(name, "33-bit Cody-Waite parts:", ", ".join(float(p).hex() for p in split(v, 33, 3)))
    print("2/pi", "53-bit:", float(2 / PI).hex(), "pi:", float(PI).hex(),
          "pi lo:", float(PI - Fraction(float(PI))).hex())
    print("pi/2 hi/lo float:", float(PI / 2).hex())
    print("pi/2 float parts (12, 12, 24 bits):", ", ".join(float(p).hex() for p in split(PI / 2, 12, 3)[:2]),
          float(split(PI / 2, 12, 3)[2]).hex())
    print("pi/2 in four parts (20, 20, 20, 53 bits):",
          ", ".join(float(p).hex() for p in split(PI / 2, 20, 4)))
    # 2/pi in 28-bit chunks, 2/pi = sum_i C_i * 2^(-28 (i + 1)): what an exact (Payne-Hanek) reduction of huge
    # arguments would multiply the 24-bit significand by. Not used by the library (see docs/kernel-math.md).
    chunks = [int((2 / PI) * 2 ** (28 * (i + 1))) % (1 << 28) for i in range(9)]
    print("2/pi 28-bit chunks:", ", ".join(f"0x{c:07x}" for c in chunks))
