#!/usr/bin/env python3
"""Golden vectors for sdk/pyrand, produced by CPython's random.Random.

Run from sdk/pyrand: python3 testdata/gen.py (or `go generate ./pyrand/`).
Each case is a seed and a list of calls made in order on one generator;
"out" holds one result per repetition. random() results are stored as
repr() strings so the Go test also checks pyrepr.Float on them.
"""
import json
import random
import sys

SEEDS = [0, 1, 42, 43, 1042, 123456789, 2**40 + 7, -42, -1, 2**32 - 1, 2**32, 2**63 - 1, -(2**63)]

# (op, args, repetitions)
OPS = [
    ("random", [], 40),
    ("getrandbits", [32], 20),
    ("getrandbits", [64], 20),
    ("getrandbits", [0], 2),
    ("getrandbits", [1], 10),
    ("getrandbits", [5], 10),
    ("getrandbits", [31], 5),
    ("getrandbits", [33], 5),
    ("getrandbits", [48], 5),
    ("getrandbits", [63], 5),
    ("randbelow", [1], 3),
    ("randbelow", [2], 10),
    ("randbelow", [3], 10),
    ("randbelow", [7], 10),
    ("randbelow", [100], 10),
    ("randbelow", [1000], 10),
    ("randbelow", [2**31 - 1], 5),
    ("randbelow", [2**31], 5),
    ("randbelow", [2**32], 5),
    ("randbelow", [2**32 + 1], 5),
    ("randbelow", [2**33 + 1], 10),
    ("randbelow", [2**53 + 3], 5),
    ("randbelow", [2**62 + 5], 5),
    ("randbelow", [2**63 - 1], 5),
    ("randrange", [0, 1_000_000], 10),
    ("randrange", [-5, 5], 10),
    ("randrange", [0, 2**32], 5),
    ("randint", [3, 7], 60),
    ("randint", [-1, 1], 10),
    ("choice", [21], 20),  # consonants
    ("choice", [5], 20),  # vowels
    ("choice", [1], 3),
    ("random", [], 5),
    ("shuffle", [10], 3),
    ("shuffle", [1000], 1),
    ("shuffle", [1], 1),
    ("shuffle", [0], 1),
    ("choices", [8000, 50], 2),
    ("choices", [13, 20], 2),
    ("choices", [1, 3], 1),
    ("choices", [5, 0], 1),
    ("sample", [5, 5], 3),
    ("sample", [100, 10], 3),
    ("sample", [8, 8], 3),
    ("sample", [21, 21], 1),  # pool
    ("sample", [22, 1], 3),  # set: n > 21
    ("sample", [21, 1], 3),  # pool: n == 21
    ("sample", [85, 6], 2),  # pool: setsize(6) = 21 + 64
    ("sample", [86, 6], 2),  # set
    ("sample", [85, 21], 1),  # pool: setsize(21) = 21 + 64
    ("sample", [86, 21], 1),  # set
    ("sample", [277, 22], 1),  # pool: setsize(22) = 21 + 256
    ("sample", [278, 22], 1),  # set
    ("sample", [100, 0], 1),
    ("sample", [1000, 50], 1),
    ("sample", [10**6, 100], 1),
    ("sample", [2**40, 5], 1),
    ("random", [], 5),
]


def call(r, op, args):
    if op == "random":
        return repr(r.random())
    if op == "getrandbits":
        return r.getrandbits(*args)
    if op == "randbelow":
        return r._randbelow(*args)
    if op == "randrange":
        return r.randrange(*args)
    if op == "randint":
        return r.randint(*args)
    if op == "choice":
        return r.choice(range(args[0]))
    if op == "shuffle":
        x = list(range(args[0]))
        r.shuffle(x)
        return x
    if op == "choices":
        return r.choices(range(args[0]), k=args[1])
    if op == "sample":
        return r.sample(range(args[0]), args[1])
    raise ValueError(op)


def main():
    cases = []
    for seed in SEEDS:
        r = random.Random(seed)
        calls = []
        for op, args, reps in OPS:
            calls.append({"op": op, "args": args, "out": [call(r, op, args) for _ in range(reps)]})
        cases.append({"seed": seed, "calls": calls})
    doc = {"python": sys.version.split()[0], "cases": cases}
    # One call per line keeps diffs of the golden file readable.
    with open("testdata/random.json", "w") as f:
        f.write('{"python": %s, "cases": [\n' % json.dumps(doc["python"]))
        for i, case in enumerate(cases):
            f.write(' {"seed": %d, "calls": [\n' % case["seed"])
            lines = ["  " + json.dumps(c) for c in case["calls"]]
            f.write(",\n".join(lines))
            f.write("\n ]}%s\n" % ("," if i < len(cases) - 1 else ""))
        f.write("]}\n")


if __name__ == "__main__":
    main()
