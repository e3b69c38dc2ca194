"""Reference vectors for the prefix-suffix-tuner, computed with CPython.

This is the design document's version of the workload written directly in
Python (random.Random, round, int, the long-doc-permutator vocabulary pool),
so the Go plugin can be checked bit for bit against it. Regenerate with
`go generate` in the plugin's directory; it writes python_reference.json.
"""

import json
import os
import random

BREAKER_TOKENS = 32
MIN_SUFFIX_TOKENS = 100
UNIQUE_ID_TOKENS = 4
OVERFLOW_FACTOR = 1.05
VOCAB_SIZE = 8000


def vocab_pool(size, seed):
    rng = random.Random(seed)
    vowels = "aeiou"
    consonants = "bcdfghjklmnpqrstvwxyz"
    pool = set()
    while len(pool) < size:
        length = rng.randint(3, 7)
        word = ""
        for j in range(length):
            if j % 2 == 0:
                word += rng.choice(consonants)
            else:
                word += rng.choice(vowels)
        word = f"{word}{len(pool)}"
        pool.add(word)
    return sorted(pool)


def resolve(tokens_per_gb, context_length, prefix_ratio, thrash):
    prefix_tokens = max(round(context_length * prefix_ratio), 1)
    suffix_tokens = context_length - prefix_tokens - BREAKER_TOKENS
    if suffix_tokens < MIN_SUFFIX_TOKENS:
        return {"error": f"suffix_tokens={suffix_tokens} is below minimum {MIN_SUFFIX_TOKENS}; "
                         f"reduce prefix_ratio or increase context_length"}
    pool_gb = thrash * OVERFLOW_FACTOR
    num_prefixes = max(int(pool_gb * tokens_per_gb / prefix_tokens), 1)
    return {"prefix_tokens": prefix_tokens, "suffix_tokens": suffix_tokens, "num_prefixes": num_prefixes}


def prefix(i, tokens, vocab, seed):
    rng = random.Random(seed + 1000 + i)
    return f"PREFIX_{i:08x} " + " ".join(rng.choices(vocab, k=max(tokens - UNIQUE_ID_TOKENS, 1)))


def suffix(tokens, vocab, seed):
    rng = random.Random(seed + 1)
    return "SUFFIX " + " ".join(rng.choices(vocab, k=max(tokens - 1, 1)))


def breaker(tokens, vocab, rng):
    unique_id = f"BR_{rng.randrange(2**32):08x}"
    return unique_id + " " + " ".join(rng.choices(vocab, k=max(tokens - UNIQUE_ID_TOKENS, 1)))


def run(seed, tokens_per_gb, context_length, prefix_ratio, thrash):
    cfg = resolve(tokens_per_gb, context_length, prefix_ratio, thrash)
    vocab = vocab_pool(VOCAB_SIZE, seed)
    sfx = suffix(cfg["suffix_tokens"], vocab, seed)
    brk = random.Random(seed + 2)
    requests = []
    for p in (1, 2):
        for i in range(cfg["num_prefixes"]):
            content = f"{prefix(i, cfg['prefix_tokens'], vocab, seed)} {breaker(BREAKER_TOKENS, vocab, brk)} {sfx}"
            requests.append({"id": f"pass{p}_p{i}", "content": content})
    return {
        "seed": seed, "tokens_per_gb": tokens_per_gb, "context_length": context_length,
        "prefix_ratio": prefix_ratio, "thrash": thrash, "resolved": cfg,
        "vocab_head": vocab[:5], "vocab_tail": vocab[-5:], "requests": requests,
    }


RESOLVE_GRID = [
    # (tokens_per_gb, context_length, prefix_ratio, thrash)
    (10000, 4000, 0.5, 10.0),
    (10000, 8000, 0.8, 20.0),
    (50000, 8000, 0.8, 20.0),
    (50000, 8000, 0.8, 100.0),
    (6553, 8000, 0.8, 20.0),
    (1000, 200, 0.34, 0.001),
    (1000, 200, 0.95, 1.0),
    (8192, 1000, 0.5, 1.0),
    (7, 300, 0.1, 0.3),
    (123457, 10001, 0.33, 7.7),
    (50000, 16385, 0.9, 0.1),
    (1, 1000, 0.25, 1e-9),
    (10, 501, 0.5, 3.0),     # 250.5: round half to even -> 250
    (10, 503, 0.5, 3.0),     # 251.5 -> 252
    (100000, 136, 0.01, 1.0),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = {
        "runs": [run(42, 180, 200, 0.3, 1.0), run(7, 400, 240, 0.45, 1.5), run(-3, 250, 400, 0.6, 0.5)],
        "resolve": [
            {"tokens_per_gb": t, "context_length": c, "prefix_ratio": r, "thrash": h, "want": resolve(t, c, r, h)}
            for (t, c, r, h) in RESOLVE_GRID
        ],
    }
    with open(os.path.join(here, "python_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
