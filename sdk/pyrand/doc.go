// Package pyrand reproduces CPython's random.Random bit for bit, for the
// methods lmbench workloads use, so that prompts, vocabularies and request
// orders are byte-identical to the Python original for the same seed.
//
// Start with New(seed), the equivalent of random.Random(seed), and call the
// methods in the same order the Python code does; every method consumes the
// Mersenne Twister stream exactly as CPython 3.11 does. Methods that pick from
// a sequence take its length and return indices, so callers keep their own
// slices:
//
//	r := pyrand.New(42)
//	order := r.Sample(len(items), len(items)) // random.sample(items, len(items))
//	word := words[r.Choice(len(words))]       // random.choice(words)
//
// Golden vectors in testdata/ were produced by testdata/gen.py with python3;
// regenerate them with `go generate ./pyrand/`.
//
// A Random is not safe for concurrent use.
package pyrand

//go:generate python3 testdata/gen.py
