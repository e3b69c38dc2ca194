#!/usr/bin/env python3
"""Golden vectors for sdk/pyrepr, produced by CPython.

Run from sdk/pyrepr: python3 testdata/gen.py (or `go generate ./pyrepr/`).
Each entry is the float's IEEE-754 bits (hex, so the input is exact), what it
is, repr(f) and json.dumps(f).
"""
import json
import math
import random
import struct
import sys


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def bits(f):
    return struct.unpack("<Q", struct.pack("<d", f))[0]


def values():
    v = []
    add = lambda note, xs: v.extend((note, x) for x in xs)
    add("special", [0.0, -0.0, math.inf, -math.inf, math.nan, from_bits(0xFFF8000000000000)])
    add("integral", [float(i) for i in range(0, 21)] + [100.0, 1000.0, 1e5, 1e6, 65536.0, 2.0**31, 2.0**32])
    add("integral", [2.0**52, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, 123456789012345.0, 1234567890123456.0])
    add("integral", [999999999999999.0, 9999999999999998.0, 1e15, 1e16, 1e17, 12345678901234567890.0])
    add("integral", [1.2345e20, 1e21, 1e22, 1e23, 1e100, 1e300, sys.float_info.max])
    add("tiny", [1e-4, 1e-5, 0.0001, 0.00012, 0.00015, 9.999e-5, 1.5e-7, 1e-7, 0.001, 0.01, 0.1, 0.5])
    add("tiny", [5e-324, 1e-323, sys.float_info.min, 2.2250738585072009e-308, 1e-300, 1e-100, 1e-10])
    add("boundary", [math.nextafter(1e-4, 0), math.nextafter(1e-4, 1), math.nextafter(1e16, 0),
                     math.nextafter(1e16, math.inf), math.nextafter(1e15, 0), math.nextafter(1e15, math.inf),
                     math.nextafter(1e-5, 0), math.nextafter(1e-5, 1), math.nextafter(1.0, 0),
                     math.nextafter(1.0, 2), math.nextafter(0.0, 1)])
    add("arithmetic", [1 / 3, 2 / 3, 2 / 3 * 1000, 0.1 + 0.2, 0.1 * 3, 1 / 7, 22 / 7, 100 / 3, 1.1 * 1.1,
                       1e-3 / 3, 16260.2, 208.1, 300.0, 48.0, 2000.0, 1.23, math.pi, math.e, math.sqrt(2)])
    # Shapes the benchmark produces: throughputs, ms latencies, rounded values.
    rng = random.Random(20240601)
    for _ in range(60):
        tokens, secs = rng.randint(1, 200000), rng.uniform(0.001, 300.0)
        v.append(("arithmetic", tokens / secs))
        v.append(("arithmetic", secs * 1000))
        v.append(("arithmetic", round(tokens / secs, 2)))
    for a in range(1, 13):
        for b in (3, 7, 9, 11, 13):
            v.append(("arithmetic", a / b))
    for k in range(-12, 26):
        v.append(("scaled", rng.random() * 10.0**k))
        v.append(("scaled", rng.random() * 10.0**k))
        v.append(("power10", 10.0**k))
        v.append(("power10", 1.5 * 10.0**k))
    for _ in range(400):
        v.append(("random-bits", from_bits(rng.getrandbits(64))))
    negatives = [("negative", -x) for note, x in v if note != "special" and not math.isnan(x) and x > 0][:150]
    return v + negatives


def main():
    rows = []
    for note, f in values():
        rows.append([f"{bits(f):016x}", note, repr(f), json.dumps(f)])
    with open("testdata/float.json", "w") as fh:
        fh.write('{"python": %s, "floats": [\n' % json.dumps(sys.version.split()[0]))
        fh.write(",\n".join(" " + json.dumps(r) for r in rows))
        fh.write("\n]}\n")


if __name__ == "__main__":
    main()
