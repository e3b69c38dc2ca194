"""Reference values for the long-doc-permutator tests, computed with CPython's
random module following the algorithm in the specification (§2.4).

    python3 testdata/reference.py > testdata/reference.json
"""

import hashlib
import itertools
import json
import math
import random

SYSTEM_WORDS = ("the system will process your request and provide an answer "
                "based on context").split()


def vocab_pool(size, seed):
    rng = random.Random(seed)
    pool = set()
    while len(pool) < size:
        n = rng.randint(3, 7)
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxyz" if j % 2 == 0 else "aeiou")
                       for j in range(n))
        pool.add(word + str(len(pool)))
    return sorted(pool)


def system_prompt(length, seed):
    if length == 0:
        return ""
    return " ".join(random.Random(seed).choices(SYSTEM_WORDS, k=length))


def contexts(n, length, pool, seed):
    return [" ".join(random.Random(seed + 1 + i).choices(pool, k=length)) for i in range(n)]


def permutations(n, k, seed):
    total = math.factorial(n)
    if k >= total:
        return [list(p) for p in itertools.permutations(range(n))]
    if total > k * 10:
        rng = random.Random(seed)
        seen = set()
        while len(seen) < k:
            seen.add(tuple(rng.sample(list(range(n)), n)))
        return [list(p) for p in sorted(seen)]
    return [list(p) for p in itertools.islice(itertools.permutations(range(n)), k)]


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def main():
    pools = []
    for size, seed in [(8000, 42), (8000, 7), (50, 0), (1, -3)]:
        pool = vocab_pool(size, seed)
        pools.append({"size": size, "seed": seed, "head": pool[:5], "tail": pool[-3:],
                      "sha256": sha256("\n".join(pool))})
    prompts = []
    for length, seed in [(0, 42), (20, 42), (50, 7), (1000, 42)]:
        text = system_prompt(length, seed)
        prompts.append({"length": length, "seed": seed, "head": text[:80], "sha256": sha256(text)})
    ctxs = []
    for n, length, seed in [(3, 12, 42), (2, 5000, 42), (4, 30, -9)]:
        texts = contexts(n, length, vocab_pool(8000, seed), seed)
        ctxs.append({"n": n, "length": length, "seed": seed,
                     "head": [t[:60] for t in texts], "sha256": [sha256(t) for t in texts]})
    perms = []
    for n, k, seed in [(3, 6, 42), (3, 100, 1), (1, 5, 42), (4, 10, 42), (5, 11, 42),
                       (5, 12, 42), (6, 5, 42), (6, 5, 7), (8, 20, 123), (12, 7, 42)]:
        perms.append({"n": n, "k": k, "seed": seed, "perms": permutations(n, k, seed)})
    print(json.dumps({"vocab": pools, "system": prompts, "contexts": ctxs,
                      "permutations": perms}, indent=1))


if __name__ == "__main__":
    main()
