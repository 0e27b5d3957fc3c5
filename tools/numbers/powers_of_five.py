#!/usr/bin/env python3
"""Prints the 128-bit powers of five that DecimalNumber's Eisel-Lemire path multiplies by.

For q >= 0, 5^q with its top bit moved to bit 127 (truncated below); for q < 0, 2^b / 5^-q rounded up, with b
chosen so that the top bit lands at bit 127 (the construction of Lemire, "Number Parsing at a Gigabyte per
Second", 2021, and of the fast_float library). Run: python3 tools/numbers/powers_of_five.py > table.txt
"""

LOWEST, HIGHEST = -64, 64

def power(q):
    if q >= 0:
        value = 5 ** q
        while value < (1 << 127):
            value *= 2
        while value >= (1 << 128):
            value //= 2
        return value
    power5 = 5 ** -q
    z = power5.bit_length()  # the least z with 2^z >= 5^-q (never a power of two)
    if q >= -27:
        # 2^(z + 127) / 5^-q fits 128 bits as it is.
        return (2 ** (z + 127)) // power5 + 1
    value = (2 ** (2 * z + 2 * 64)) // power5 + 1
    while value >= (1 << 128):
        value //= 2
    return value

for q in range(LOWEST, HIGHEST + 1):
    value = power(q)
    print(f"        (0x{value >> 64:016X}, 0x{value & ((1 << 64) - 1):016X}),  // 5^{q}")
