package pyrand_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/pyrepr"
)

type goldenCall struct {
	Op   string            `json:"op"`
	Args []int             `json:"args"`
	Out  []json.RawMessage `json:"out"` // one result per repetition
}

type goldenCase struct {
	Seed  int64        `json:"seed"`
	Calls []goldenCall `json:"calls"`
}

// TestGolden replays the calls of testdata/random.json (written by
// testdata/gen.py from CPython's random.Random) on one generator per seed and
// requires identical results, so any drift in stream consumption shows up in
// every later call.
func TestGolden(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/random.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Python string       `json:"python"`
		Cases  []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatalf("testdata/random.json: %v", err)
	}
	for _, c := range golden.Cases {
		t.Run(strconv.FormatInt(c.Seed, 10), func(t *testing.T) {
			t.Parallel()
			r := pyrand.New(c.Seed)
			for i, call := range c.Calls {
				for rep, out := range call.Out {
					want, got := replay(t, r, call, out)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("call %d %s%v repetition %d: mismatch with python %s (-want +got):\n%s",
							i, call.Op, call.Args, rep, golden.Python, diff)
					}
				}
			}
		})
	}
}

// replay makes one call on r and returns the golden result and Go's, both
// decoded to the same type.
func replay(t *testing.T, r *pyrand.Random, call goldenCall, out json.RawMessage) (want, got any) {
	t.Helper()
	decode := func(v any) {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s%v: result %s: %v", call.Op, call.Args, out, err)
		}
	}
	arg := func(i int) int {
		if i >= len(call.Args) {
			t.Fatalf("%s: want at least %d args, got %v", call.Op, i+1, call.Args)
		}
		return call.Args[i]
	}
	switch call.Op {
	case "random":
		var repr string
		decode(&repr)
		f := r.Random()
		wantF, err := strconv.ParseFloat(repr, 64)
		if err != nil {
			t.Fatalf("random: golden %q: %v", repr, err)
		}
		// Exact bits first, then Python's printed form of them.
		return [2]any{math.Float64bits(wantF), repr}, [2]any{math.Float64bits(f), pyrepr.Float(f)}
	case "getrandbits":
		var w uint64
		decode(&w)
		return w, r.GetRandBits(arg(0))
	case "randbelow":
		var w int
		decode(&w)
		return w, r.RandBelow(arg(0))
	case "randrange":
		var w int
		decode(&w)
		return w, r.RandRange(arg(0), arg(1))
	case "randint":
		var w int
		decode(&w)
		return w, r.RandInt(arg(0), arg(1))
	case "choice":
		var w int
		decode(&w)
		return w, r.Choice(arg(0))
	case "shuffle":
		var w []int
		decode(&w)
		x := make([]int, arg(0))
		for i := range x {
			x[i] = i
		}
		r.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		return w, x
	case "choices":
		var w []int
		decode(&w)
		return w, r.Choices(arg(0), arg(1))
	case "sample":
		var w []int
		decode(&w)
		return w, r.Sample(arg(0), arg(1))
	}
	t.Fatalf("testdata/random.json: unknown op %q", call.Op)
	return nil, nil
}

func TestPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		call func(r *pyrand.Random)
	}{
		{"RandBelow(0)", func(r *pyrand.Random) { r.RandBelow(0) }},
		{"RandRange(5,5)", func(r *pyrand.Random) { r.RandRange(5, 5) }},
		{"RandInt(7,3)", func(r *pyrand.Random) { r.RandInt(7, 3) }},
		{"Choice(0)", func(r *pyrand.Random) { r.Choice(0) }},
		{"Choices(0,1)", func(r *pyrand.Random) { r.Choices(0, 1) }},
		{"Sample(3,4)", func(r *pyrand.Random) { r.Sample(3, 4) }},
		{"Sample(3,-1)", func(r *pyrand.Random) { r.Sample(3, -1) }},
		{"GetRandBits(65)", func(r *pyrand.Random) { r.GetRandBits(65) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Errorf("%s: want a panic, got none", tt.name)
				}
			}()
			tt.call(pyrand.New(1))
		})
	}
}

// The long-doc-qa "random" shuffle policy: Random(seed).shuffle(schedule).
func ExampleRandom_Shuffle() {
	schedule := []string{"doc0_q0", "doc1_q0", "doc2_q0", "doc0_q1", "doc1_q1", "doc2_q1"}
	pyrand.New(42).Shuffle(len(schedule), func(i, j int) {
		schedule[i], schedule[j] = schedule[j], schedule[i]
	})
	fmt.Println(schedule)
	// Output: [doc0_q1 doc1_q0 doc2_q0 doc1_q1 doc0_q0 doc2_q1]
}

// random.Random(42).choices(words, k=4), as the long-doc-permutator builds
// its system prompt.
func ExampleRandom_Choices() {
	words := []string{"the", "system", "will", "process", "your", "request"}
	var picked []string
	for _, i := range pyrand.New(42).Choices(len(words), 4) {
		picked = append(picked, words[i])
	}
	fmt.Println(strings.Join(picked, " "))
	// Output: process the system system
}
