package main

//go:generate python3 testdata/gen.py

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// seven is the §9 data fixture: 200-token requests, 60-token prefixes
// (ratio 0.3), 108-token suffix, and 1 GB × 1.05 × 400 tokens/GB / 60 = 7
// prefixes.
var (
	sevenOpts   = map[string]any{"context-length": 200, "prefix-ratio": 0.3, "thrash": 1.0}
	sevenCommon = workload.Common{TokensPerGB: 400}
)

// parts splits a request's content into prefix, breaker and suffix at the
// "BR_" and "SUFFIX" headers.
func parts(t *testing.T, s sdktest.Sent) (prefix, breaker, suffix string) {
	t.Helper()
	c := sdktest.UserText(t, s)
	b := strings.Index(c, " BR_")
	x := strings.Index(c, " SUFFIX ")
	if b < 0 || x < b {
		t.Fatalf("%s: content is not prefix, breaker, suffix: %.80q…", s.ID, c)
	}
	return c[:b], c[b+1 : x], c[x+1:]
}

func newWorkload(t *testing.T, o Options, c workload.Common, reg *workload.Registry) *tuner {
	t.Helper()
	if reg == nil {
		reg = workload.NewRegistry()
	}
	wl, err := Definition.New(o, workload.Env{Common: c, Logger: zerolog.Nop(), Content: reg})
	if err != nil {
		t.Fatal(err)
	}
	return wl.(*tuner)
}

func TestSchema(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Label string
		Default     any
	}
	var got []row
	for _, s := range specs {
		got = append(got, row{s.Name, s.Label, s.Default})
		if s.Help == "" {
			t.Errorf("%s has no help", s.Name)
		}
	}
	want := []row{
		{"context-length", "Context length (tokens)", int64(8000)},
		{"prefix-ratio", "Prefix ratio", 0.8},
		{"thrash", "Target tier size (GB)", 20.0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("option schema (-want +got):\n%s", d)
	}
	// --help must say which tier is targeted and how the pool is sized.
	help := specs[2].Help
	for _, s := range []string{"GPU", "CPU", "disk", "CacheBlend", "1.05", "prefix tokens", "--kv-cache-volume is not used"} {
		if !strings.Contains(help, s) {
			t.Errorf("--psf-thrash help does not mention %q: %s", s, help)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	// The original's dataclass defaults: 8000/0.8/20 and the derived 1/1/1/32
	// until resolved; resolved with 10000 tokens/GB: 6400/1568/32 prefixes.
	o := Definition.Defaults
	if o.ContextLength != 8000 || o.PrefixRatio != 0.8 || o.Thrash != 20 {
		t.Errorf("defaults %+v", o)
	}
	if err := (config{ContextLength: 8000, PrefixRatio: 0.8, Thrash: 20, NumPrefixes: 1, PrefixTokens: 1, SuffixTokens: 1, BreakerTokens: 32}).validate(); err != nil {
		t.Errorf("the original's default config is invalid: %v", err)
	}
	wl := newWorkload(t, o, workload.Common{Seed: 42, TokensPerGB: 10000}, nil)
	want := map[string]any{"num-prefixes": 32, "prefix-tokens": 6400, "suffix-tokens": 1568, "breaker-tokens": 32}
	if d := cmp.Diff(want, wl.Resolved()); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
}

func TestConfigCustom(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	want := map[string]any{
		"context-length": int64(200), "prefix-ratio": 0.3, "thrash": 1.0,
		"num-prefixes": int64(7), "prefix-tokens": int64(60), "suffix-tokens": int64(108), "breaker-tokens": int64(32),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if tr.Planned != 7 || len(tr.Warmup()) != 7 || len(tr.Measured()) != 7 {
		t.Errorf("planned %d, warmup %d, measured %d; want 7 each", tr.Planned, len(tr.Warmup()), len(tr.Measured()))
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{}, []sdktest.FieldErrorCase{
		{Name: "context 0", Options: map[string]any{"context-length": 0},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be positive, got 0"}}},
		{Name: "context -5", Options: map[string]any{"context-length": -5},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be positive, got -5"}}},
		{Name: "context too long", Options: map[string]any{"context-length": maxContextLength + 1},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be at most 16777216 tokens, got 16777217"}}},
		{Name: "ratio 0", Options: map[string]any{"prefix-ratio": 0.0},
			Want: []option.FieldError{{Option: "prefix-ratio", Message: "prefix_ratio must be in (0.0, 1.0), got 0.0"}}},
		{Name: "ratio 1", Options: map[string]any{"prefix-ratio": 1.0},
			Want: []option.FieldError{{Option: "prefix-ratio", Message: "prefix_ratio must be in (0.0, 1.0), got 1.0"}}},
		{Name: "ratio -0.5", Options: map[string]any{"prefix-ratio": -0.5},
			Want: []option.FieldError{{Option: "prefix-ratio", Message: "prefix_ratio must be in (0.0, 1.0), got -0.5"}}},
		{Name: "thrash 0", Options: map[string]any{"thrash": 0.0},
			Want: []option.FieldError{{Option: "thrash", Message: "thrash (GB) must be positive, got 0.0"}}},
		{Name: "thrash -1", Options: map[string]any{"thrash": -1.0},
			Want: []option.FieldError{{Option: "thrash", Message: "thrash (GB) must be positive, got -1.0"}}},
		{Name: "suffix too small", Options: map[string]any{"context-length": 200, "prefix-ratio": 0.95},
			Want: []option.FieldError{{Option: "prefix-ratio", Message: "suffix_tokens=-22 is below minimum 100; reduce prefix_ratio or increase context_length (context_length 200 - prefix_tokens 190 (200 x prefix_ratio 0.95) - 32 breaker tokens)"}}},
		{Name: "absurd pool", Options: map[string]any{"thrash": 1e12},
			Want: []option.FieldError{{Option: "thrash", Message: "thrash x 1.05 x tokens_per_gb / prefix_tokens = 8.203125e+12 prefixes, more than the 16777216 supported; lower thrash (GB)"}}},
		{Name: "all reported together", Options: map[string]any{"context-length": 0, "prefix-ratio": 1.5, "thrash": -2.5},
			Want: []option.FieldError{
				{Option: "context-length", Message: "context_length must be positive, got 0"},
				{Option: "prefix-ratio", Message: "prefix_ratio must be in (0.0, 1.0), got 1.5"},
				{Option: "thrash", Message: "thrash (GB) must be positive, got -2.5"},
			}},
	})
	// thrash 0.5 is valid.
	if _, err := sdktest.RunE(Definition, sdktest.Options{Options: map[string]any{"context-length": 200, "prefix-ratio": 0.3, "thrash": 0.5}, Common: sevenCommon}); err != nil {
		t.Errorf("thrash 0.5 rejected: %v", err)
	}
}

func TestSeedOverflow(t *testing.T) {
	t.Parallel()
	// 7 prefixes: prefix 6 uses seed+1006, the largest seed is MaxInt64-1006.
	const largest = math.MaxInt64 - 1006
	if _, err := sdktest.RunE(Definition, sdktest.Options{Options: sevenOpts, Common: workload.Common{Seed: largest, TokensPerGB: 400}}); err != nil {
		t.Errorf("the largest seed for 7 prefixes was rejected: %v", err)
	}
	_, err := sdktest.RunE(Definition, sdktest.Options{Options: sevenOpts, Common: workload.Common{Seed: largest + 1, TokensPerGB: 400}})
	want := "--seed 9223372036854774802 is too large: prefix i is drawn with seed+1000+i, so for 7 prefixes the seed must be at most 9223372036854774801"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	// Negative seeds work, as in Python (random.Random uses |seed|).
	if _, err := sdktest.RunE(Definition, sdktest.Options{Options: sevenOpts, Common: workload.Common{Seed: -5, TokensPerGB: 400}}); err != nil {
		t.Errorf("seed -5: %v", err)
	}
}

// TestConfigValidate covers the derived fields the original's
// __post_init__ checks; users cannot set them, resolve must never break them.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	good := config{ContextLength: 8000, PrefixRatio: 0.8, Thrash: 20, NumPrefixes: 1, PrefixTokens: 1, SuffixTokens: 1, BreakerTokens: 32}
	for _, tc := range []struct {
		mod  func(*config)
		want string
	}{
		{func(c *config) { c.NumPrefixes = 0 }, "num_prefixes must be >= 1, got 0"},
		{func(c *config) { c.PrefixTokens = 0 }, "prefix_tokens must be >= 1, got 0"},
		{func(c *config) { c.SuffixTokens = 0 }, "suffix_tokens must be >= 1, got 0"},
		{func(c *config) { c.BreakerTokens = 0 }, "breaker_tokens must be >= 1, got 0"},
		{func(c *config) { c.PrefixRatio = 1 }, "prefix-ratio: prefix_ratio must be in (0.0, 1.0), got 1.0"},
	} {
		c := good
		tc.mod(&c)
		if err := c.validate(); err == nil || err.Error() != tc.want {
			t.Errorf("validate() = %v, want %q", err, tc.want)
		}
	}
}

func mustResolve(t *testing.T, ctx int, ratio, thrash float64, tpg int64) config {
	t.Helper()
	c, err := resolve(Options{ContextLength: ctx, PrefixRatio: ratio, Thrash: thrash}, tpg)
	if err != nil {
		t.Fatalf("resolve(%d, %v, %v, %d): %v", ctx, ratio, thrash, tpg, err)
	}
	return c
}

func TestResolve(t *testing.T) {
	t.Parallel()
	// §9's resolve case with the design document's divisor (prefix tokens):
	// 10 × 1.05 × 10000 / 2000 = 52 (the later code's context_length gives 26).
	c := mustResolve(t, 4000, 0.5, 10, 10000)
	if c.PrefixTokens != 2000 || c.SuffixTokens != 1968 || c.NumPrefixes != 52 || c.BreakerTokens != 32 {
		t.Errorf("resolve = %+v, want prefix 2000, suffix 1968, 52 prefixes", c)
	}
	// Default thrash scaling: 20 × 1.05 × 50000 / 6400 = 164.06.
	if c := mustResolve(t, 8000, 0.8, 20, 50000); c.PrefixTokens != 6400 || c.NumPrefixes != 164 {
		t.Errorf("defaults at 50000 tokens/GB = %+v, want 6400 / 164", c)
	}
	// At least one prefix.
	if c := mustResolve(t, 8000, 0.8, 0.0001, 10); c.NumPrefixes != 1 {
		t.Errorf("tiny tier: %d prefixes, want 1", c.NumPrefixes)
	}
	// A suffix of exactly 100 tokens is allowed (200 × 0.34 = 68.00000000000001).
	if c := mustResolve(t, 200, 0.34, 1, 1000); c.SuffixTokens != 100 || c.PrefixTokens != 68 {
		t.Errorf("ratio 0.34: %+v, want suffix 100", c)
	}
	// Doubling thrash about doubles the pool.
	for _, th := range []float64{1, 7.5, 20, 64} {
		a, b := mustResolve(t, 8000, 0.8, th, 50000), mustResolve(t, 8000, 0.8, 2*th, 50000)
		if d := b.NumPrefixes - 2*a.NumPrefixes; d < -1 || d > 1 {
			t.Errorf("thrash %v: %d prefixes, doubled: %d", th, a.NumPrefixes, b.NumPrefixes)
		}
	}
	// 100 GB: 820 prefixes, and the prefixes alone exceed the tier.
	c = mustResolve(t, 8000, 0.8, 100, 50000)
	if c.NumPrefixes != 820 || float64(c.NumPrefixes*c.PrefixTokens) <= c.tierTokens(50000) {
		t.Errorf("100 GB: %d prefixes × %d tokens vs tier %.0f tokens", c.NumPrefixes, c.PrefixTokens, c.tierTokens(50000))
	}
}

type pythonReference struct {
	Runs []struct {
		Seed          int64    `json:"seed"`
		TokensPerGB   int64    `json:"tokens_per_gb"`
		ContextLength int      `json:"context_length"`
		PrefixRatio   float64  `json:"prefix_ratio"`
		Thrash        float64  `json:"thrash"`
		VocabHead     []string `json:"vocab_head"`
		VocabTail     []string `json:"vocab_tail"`
		Requests      []struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		} `json:"requests"`
	} `json:"runs"`
	Resolve []struct {
		TokensPerGB   int64   `json:"tokens_per_gb"`
		ContextLength int     `json:"context_length"`
		PrefixRatio   float64 `json:"prefix_ratio"`
		Thrash        float64 `json:"thrash"`
		Want          struct {
			PrefixTokens int    `json:"prefix_tokens"`
			SuffixTokens int    `json:"suffix_tokens"`
			NumPrefixes  int    `json:"num_prefixes"`
			Error        string `json:"error"`
		} `json:"want"`
	} `json:"resolve"`
}

func loadReference(t *testing.T) pythonReference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "python_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref pythonReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestResolveMatchesPython checks the token split and pool size against
// CPython's arithmetic (round half to even, float product, int truncation)
// over testdata/gen.py's grid.
func TestResolveMatchesPython(t *testing.T) {
	t.Parallel()
	ref := loadReference(t)
	if len(ref.Resolve) < 10 {
		t.Fatalf("only %d reference cases", len(ref.Resolve))
	}
	for _, tc := range ref.Resolve {
		c, err := resolve(Options{ContextLength: tc.ContextLength, PrefixRatio: tc.PrefixRatio, Thrash: tc.Thrash}, tc.TokensPerGB)
		if tc.Want.Error != "" {
			if err == nil || !strings.Contains(err.Error(), tc.Want.Error) {
				t.Errorf("%+v: error %v, want %q", tc, err, tc.Want.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		if c.PrefixTokens != tc.Want.PrefixTokens || c.SuffixTokens != tc.Want.SuffixTokens || c.NumPrefixes != tc.Want.NumPrefixes {
			t.Errorf("ctx %d ratio %v thrash %v tpg %d: got %d/%d/%d, Python %d/%d/%d", tc.ContextLength, tc.PrefixRatio, tc.Thrash, tc.TokensPerGB,
				c.PrefixTokens, c.SuffixTokens, c.NumPrefixes, tc.Want.PrefixTokens, tc.Want.SuffixTokens, tc.Want.NumPrefixes)
		}
	}
}

// TestRequestsMatchPython pins every prompt of two small runs, both passes,
// to the design document's algorithm run by CPython (testdata/gen.py): the
// vocabulary pool, per-component seeds and the breaker stream are bit-exact.
func TestRequestsMatchPython(t *testing.T) {
	t.Parallel()
	ref := loadReference(t)
	for _, run := range ref.Runs {
		t.Run(fmt.Sprint("seed ", run.Seed), func(t *testing.T) {
			t.Parallel()
			vocab := pseudoword.Vocab(vocabSize, run.Seed)
			if !slices.Equal(vocab[:5], run.VocabHead) || !slices.Equal(vocab[len(vocab)-5:], run.VocabTail) {
				t.Errorf("vocabulary pool starts %q ends %q, Python %q … %q", vocab[:5], vocab[len(vocab)-5:], run.VocabHead, run.VocabTail)
			}
			tr := sdktest.RunGRPC(t, Definition, sdktest.Options{
				Options: map[string]any{"context-length": run.ContextLength, "prefix-ratio": run.PrefixRatio, "thrash": run.Thrash},
				Common:  workload.Common{Seed: run.Seed, TokensPerGB: run.TokensPerGB},
			})
			if len(tr.Requests) != len(run.Requests) {
				t.Fatalf("%d requests, Python %d", len(tr.Requests), len(run.Requests))
			}
			for i, want := range run.Requests {
				got := tr.Requests[i]
				if got.ID != want.ID {
					t.Errorf("request %d: id %s, Python %s", i, got.ID, want.ID)
				}
				if c := sdktest.UserText(t, got); c != want.Content {
					n := 0
					for n < min(len(c), len(want.Content)) && c[n] == want.Content[n] {
						n++
					}
					t.Errorf("%s differs from Python at byte %d: %.40q vs %.40q", got.ID, n, c[n:], want.Content[n:])
				}
			}
		})
	}
}

func TestData(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	warm := tr.Warmup()
	if len(warm) != 7 {
		t.Fatalf("%d prefixes, want 7", len(warm))
	}
	prefixes := map[string]bool{}
	bodies := map[string]bool{}
	for i, s := range warm {
		p, _, x := parts(t, s)
		if h := fmt.Sprintf("PREFIX_%08x ", i); !strings.HasPrefix(p, h) {
			t.Errorf("prefix %d starts %.20q, want %q", i, p, h)
		}
		if n := len(strings.Fields(p)); n != 1+60-4 {
			t.Errorf("prefix %d has %d words, want header + 56", i, n)
		}
		prefixes[p] = true
		bodies[p[len("PREFIX_00000000 "):]] = true
		if !strings.HasPrefix(x, "SUFFIX ") || len(strings.Fields(x)) != 108 {
			t.Errorf("suffix %.20q… has %d words, want SUFFIX + 107", x, len(strings.Fields(x)))
		}
	}
	if len(prefixes) != 7 || len(bodies) != 7 {
		t.Errorf("%d distinct prefixes, %d distinct bodies; want 7", len(prefixes), len(bodies))
	}
	// Deterministic per seed; another seed changes prefixes, suffix and breakers.
	again := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	if d := cmp.Diff(tr.Requests, again.Requests); d != "" {
		t.Errorf("same seed, different requests:\n%s", d)
	}
	other := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: workload.Common{Seed: 43, TokensPerGB: 400}})
	for i := range tr.Requests {
		p1, b1, s1 := parts(t, tr.Requests[i])
		p2, b2, s2 := parts(t, other.Requests[i])
		if p1 == p2 || b1 == b2 || s1 == s2 {
			t.Errorf("%s: seeds 42 and 43 share prefix %v, breaker %v, suffix %v", tr.Requests[i].ID, p1 == p2, b1 == b2, s1 == s2)
		}
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	var suffix string
	breakers := map[string]string{}
	for _, s := range tr.Requests {
		c := sdktest.UserText(t, s)
		p, b, x := parts(t, s)
		if c != p+" "+b+" "+x {
			t.Errorf("%s is not prefix, breaker and suffix joined by single spaces", s.ID)
		}
		if !strings.HasPrefix(c, "PREFIX_") || strings.Index(c, "SUFFIX") <= 0 {
			t.Errorf("%s: prefix not at position 0 before SUFFIX", s.ID)
		}
		if suffix == "" {
			suffix = x
		} else if x != suffix {
			t.Errorf("%s has a different suffix", s.ID)
		}
		if !strings.HasPrefix(b, "BR_") || len(strings.Fields(b)) != 29 || len(b) < len("BR_00000000") {
			t.Errorf("%s: breaker %q is not BR_<8 hex> + 28 words", s.ID, b)
		}
		if prev, ok := breakers[b]; ok {
			t.Errorf("%s reuses the breaker of %s", s.ID, prev)
		}
		breakers[b] = s.ID
		if s.MaxTokens != 1 {
			t.Errorf("%s: max_tokens %d, want 1", s.ID, s.MaxTokens)
		}
		if s.Tags["prefix"] == "" || len(s.Tags) != 2 {
			t.Errorf("%s: tags %v", s.ID, s.Tags)
		}
	}
	if !strings.Contains(sdktest.UserText(t, tr.Warmup()[2]), "PREFIX_00000002 ") {
		t.Error("pass1_p2 lacks PREFIX_00000002")
	}
}

func TestPasses(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon, Engine: sdktest.OutOfOrderEngine, Logger: log})
	warm, meas := tr.Warmup(), tr.Measured()
	var wantWarm, wantMeas []string
	for i := range 7 {
		wantWarm = append(wantWarm, fmt.Sprintf("pass1_p%d", i))
		wantMeas = append(wantMeas, fmt.Sprintf("pass2_p%d", i))
	}
	if d := cmp.Diff(wantWarm, sdktest.IDs(warm)); d != "" {
		t.Errorf("pass 1 ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantMeas, sdktest.IDs(meas)); d != "" {
		t.Errorf("pass 2 ids (-want +got):\n%s", d)
	}
	for i := range 7 {
		p1, b1, _ := parts(t, warm[i])
		p2, b2, _ := parts(t, meas[i])
		if p1 != p2 {
			t.Errorf("prefix %d differs between the passes", i)
		}
		if b1 == b2 {
			t.Errorf("prefix %d: same breaker in both passes", i)
		}
		if warm[i].Tags["prefix"] != fmt.Sprint(i) || warm[i].Tags["pass"] != "1" || meas[i].Tags["prefix"] != fmt.Sprint(i) || meas[i].Tags["pass"] != "2" {
			t.Errorf("tags %v / %v", warm[i].Tags, meas[i].Tags)
		}
	}
	// Strictly sequential: one in flight, and each sent the moment the previous finished.
	for _, ph := range []struct {
		sent  []sdktest.Sent
		phase workload.Phase
	}{{warm, workload.Warmup}, {meas, workload.Measure}} {
		if got := tr.MaxInFlight(ph.phase); got != 1 {
			t.Errorf("%v: %d requests in flight at once, want 1", ph.phase, got)
		}
		finish := map[string]time.Duration{}
		for _, r := range tr.Results {
			finish[r.ID] = r.Finish
		}
		for i := 1; i < len(ph.sent); i++ {
			if ph.sent[i].Offset != finish[ph.sent[i-1].ID] {
				t.Errorf("%s sent at %v, previous finished at %v", ph.sent[i].ID, ph.sent[i].Offset, finish[ph.sent[i-1].ID])
			}
		}
	}
	// Pass 1 progress at info, as long-doc-qa's warmup; pass 2 at debug, as
	// measured dispatches are.
	wantInfo := []string{"Pass 1 (warmup): 7 requests"}
	wantDebug := []string{"Computed num_prefixes=7 from thrash=1.00 GB (target tier), overflow factor 1.050 -> pool=1.05 GB, tokens_per_gb_kvcache=400, prefix_tokens=60"}
	for i := range 7 {
		wantInfo = append(wantInfo, fmt.Sprintf("Pass 1 dispatched %d/7", i+1))
	}
	wantInfo = append(wantInfo, "Pass 1 complete: 7 prefixes populated")
	for i := range 7 {
		wantDebug = append(wantDebug, fmt.Sprintf("Pass 2 %d/7", i+1))
	}
	if d := cmp.Diff(wantInfo, logs.At(t, "info")); d != "" {
		t.Errorf("info logs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantDebug, logs.At(t, "debug")); d != "" {
		t.Errorf("debug logs (-want +got):\n%s", d)
	}
	if w := logs.At(t, "warn"); len(w) != 0 {
		t.Errorf("unexpected warnings %q", w)
	}
}

// TestStep drives Step directly: one request per call, then wait for it;
// nothing while one is in flight; done after the pool.
func TestStep(t *testing.T) {
	t.Parallel()
	o := Options{ContextLength: 200, PrefixRatio: 0.3, Thrash: 1}
	w := newWorkload(t, o, workload.Common{Seed: 42, TokensPerGB: 180}, nil) // 1.05 × 180 / 60 = 3 prefixes
	n := w.cfg.NumPrefixes
	if n != 3 {
		t.Fatalf("%d prefixes, want 3", n)
	}
	ctx := context.Background()
	for _, ph := range []workload.Phase{workload.Warmup, workload.Measure} {
		for i := range n {
			out, err := w.Step(ctx, workload.StepInput{Phase: ph, InFlight: 1})
			if err != nil || out.String() != "send [], then wait for a finish" {
				t.Fatalf("%v with one in flight: %v, %v", ph, out, err)
			}
			out, err = w.Step(ctx, workload.StepInput{Phase: ph})
			want := fmt.Sprintf("send [pass%d_p%d], then wait for a finish", int(ph), i)
			if err != nil || out.String() != want {
				t.Fatalf("%v step %d: %v, %v; want %s", ph, i, out, err, want)
			}
		}
		if out, _ := w.Step(ctx, workload.StepInput{Phase: ph}); out.String() != "send [], then done" {
			t.Errorf("%v after the pool: %v", ph, out)
		}
	}
	if _, err := w.Step(ctx, workload.StepInput{Phase: 0}); err == nil {
		t.Error("unknown phase accepted")
	}
	// OnFinished is stateless: results, even unknown ones, change nothing.
	if err := w.OnFinished(ctx, []workload.Result{{ID: "nope", Phase: workload.Measure}}); err != nil {
		t.Error(err)
	}
}

// TestSuffixCrossesOnce checks the shared suffix is registered once, with
// the first request, and referenced by every request.
func TestSuffixCrossesOnce(t *testing.T) {
	t.Parallel()
	reg := workload.NewRegistry()
	w := newWorkload(t, Options{ContextLength: 200, PrefixRatio: 0.3, Thrash: 1}, workload.Common{Seed: 42, TokensPerGB: 400}, reg)
	if got := reg.Drain(); len(got) != 0 {
		t.Fatalf("New registered %d contents", len(got))
	}
	var registered []string
	ctx := context.Background()
	for _, ph := range []workload.Phase{workload.Warmup, workload.Measure} {
		for {
			out, err := w.Step(ctx, workload.StepInput{Phase: ph})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range reg.Drain() {
				registered = append(registered, c.ID)
				if !strings.HasPrefix(c.Text, "SUFFIX ") {
					t.Errorf("registered %q is not the suffix", c.ID)
				}
			}
			if len(out.Requests) == 0 {
				break
			}
			segs := out.Requests[0].Messages[0].Content
			if len(segs) != 2 || segs[1].Ref != "suffix" || !strings.HasSuffix(segs[0].Text, " ") {
				t.Errorf("%s: segments %+v", out.Requests[0].ID, segs)
			}
		}
	}
	if !slices.Equal(registered, []string{"suffix"}) {
		t.Errorf("registered %q, want the suffix once", registered)
	}
}

func TestPass1FailureLogged(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	failing := func(s sdktest.Sent) sdktest.Reply {
		if s.ID == "pass1_p3" || s.ID == "pass2_p1" {
			return sdktest.Reply{Error: "HTTP 500: overloaded", Latency: time.Millisecond}
		}
		return sdktest.DefaultEngine(s)
	}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon, Engine: failing, Logger: log})
	if d := cmp.Diff([]string{"Pass 1 pass1_p3 failed: HTTP 500: overloaded"}, logs.At(t, "warn")); d != "" {
		t.Errorf("warn logs (-want +got):\n%s", d)
	}
	// A failure stops nothing: every request of both passes is sent once.
	if len(tr.Warmup()) != 7 || len(tr.Measured()) != 7 {
		t.Errorf("warmup %d, measured %d; want 7, 7", len(tr.Warmup()), len(tr.Measured()))
	}
}

// TestSmallPoolWarns: when rounding leaves the prefixes alone no larger
// than the tier (a pool of few, large prefixes), the LRU invariant cannot be
// promised, and the user is told.
func TestSmallPoolWarns(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	// 1 GB × 1.05 × 1000 / 500 = 2.1 -> 2 prefixes = 1000 tokens = the tier.
	sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"context-length": 1000, "prefix-ratio": 0.5, "thrash": 1.0},
		Common:  workload.Common{TokensPerGB: 1000}, Logger: log,
	})
	want := []string{"the prefix pool (2 prefixes x 500 tokens = 1000 tokens) does not exceed the targeted tier (1.00 GB = 1000 tokens): " +
		"pass 2 can hit that tier unless it also holds the breakers and suffix; raise --psf-thrash or lower --psf-context-length"}
	if d := cmp.Diff(want, logs.At(t, "warn")); d != "" {
		t.Errorf("warn logs (-want +got):\n%s", d)
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	want := []workload.Field{
		{Label: "Context length", Value: "200 tokens"},
		{Label: "Prefix tokens", Value: "60 (ratio=0.3)"},
		{Label: "Breaker tokens", Value: "32 (random per request)"},
		{Label: "Suffix tokens", Value: "108 (shared, deterministic)"},
		{Label: "Target tier", Value: "1.00 GB (overflow x1.05 = 1.05 GB)"},
		{Label: "Prefix pool size", Value: "7"},
		{Label: "Pool tokens", Value: "0.00M"},
		{Label: "Total measured", Value: "7 requests (pass 2 of 2)"},
	}
	if d := cmp.Diff(want, tr.Banner); d != "" {
		t.Errorf("banner (-want +got):\n%s", d)
	}
	if tr.Title != "prefix-suffix-tuner" {
		t.Errorf("title %q", tr.Title)
	}
	// The defaults at 50000 tokens/GB, as the original prints them.
	w := newWorkload(t, Definition.Defaults, workload.Common{Seed: 42, TokensPerGB: 50000}, nil)
	got := w.Banner()
	for i, v := range []string{"8000 tokens", "6400 (ratio=0.8)", "32 (random per request)", "1568 (shared, deterministic)",
		"20.00 GB (overflow x1.05 = 21.00 GB)", "164", "1.05M", "164 requests (pass 2 of 2)"} {
		if got[i].Value != v {
			t.Errorf("%s: %q, want %q", got[i].Label, got[i].Value, v)
		}
	}
}

func TestFullRun(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon})
	if len(tr.Warmup()) != 7 || len(tr.Measured()) != 7 || tr.Planned != 7 || len(tr.Results) != 14 {
		t.Errorf("warmup %d, measured %d, planned %d, results %d; want 7, 7, 7, 14",
			len(tr.Warmup()), len(tr.Measured()), tr.Planned, len(tr.Results))
	}
}

// TestGoldenTranscript pins the whole request stream of a small run (3
// prefixes of 60 tokens, 200-token requests, seed 42). Rewrite with
// `go test -run TestGoldenTranscript -update`.
func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.RunGRPC(t, Definition, sdktest.Options{
		Options: map[string]any{"context-length": 200, "prefix-ratio": 0.3, "thrash": 1.0},
		Common:  workload.Common{TokensPerGB: 180},
	})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}

// BenchmarkRequest measures building one default-sized request (a
// 6400-token prefix regenerated from its seed, a fresh breaker).
func BenchmarkRequest(b *testing.B) {
	w, err := Definition.New(Definition.Defaults, workload.Env{Common: workload.Common{Seed: 42, TokensPerGB: 50000}, Logger: zerolog.Nop(), Content: workload.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	t := w.(*tuner)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t.request(1, i%t.cfg.NumPrefixes)
	}
}
