package main

import (
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// small: 1 GB x 100 tokens per GB = 100 tokens of cache, 5 documents of
// 20 tokens; overflow 2 makes a pool of 10.
func small() sdktest.Options {
	return sdktest.Options{
		Options: map[string]any{"context-length": 20, "docs-per-request": 2, "system-prompt-length": 5, "num-requests": 12, "num-inflight-requests": 2},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100},
	}
}

func withOpts(o sdktest.Options, kv ...any) sdktest.Options {
	m := map[string]any{}
	for k, v := range o.Options {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	o.Options = m
	return o
}

func TestContract(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, small())
}

func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, small())
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}

// The options and defaults are the original's (KVTierPressureConfig).
func TestSchemaDefaults(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, s := range specs {
		got[s.Name] = s.Default
	}
	want := map[string]any{
		"pool-size": int64(0), "docs-per-request": int64(16), "context-length": int64(2560), "system-prompt-length": int64(256),
		"num-requests": int64(200), "overflow-factor": 2.0, "access-skew": 0.0, "vocab-size": int64(8000),
		"num-inflight-requests": int64(8), "max-output-length": int64(1),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

// The pool is ceil(F x V x tokens per GB / context length); the sweep
// sends every document once, back-filling the last group; the measured
// phase sends num-requests requests of docs-per-request distinct documents.
func TestPoolSweepAndStream(t *testing.T) {
	t.Parallel()
	o := withOpts(small(), "docs-per-request", 3, "overflow-factor", 2.5)
	tr := sdktest.Run(t, Definition, o)
	// 2.5 x 1 x 100 / 20 = 12.5 -> 13 documents.
	if tr.Resolved["pool-size"] != int64(13) {
		t.Fatalf("pool-size resolved to %v, want 13", tr.Resolved["pool-size"])
	}
	var sweep []string
	for _, s := range tr.Warmup() {
		sweep = append(sweep, s.Tags["docs"])
		if s.MaxTokens != 1 {
			t.Errorf("%s: max_tokens %d, want 1", s.ID, s.MaxTokens)
		}
	}
	want := []string{"0 1 2", "3 4 5", "6 7 8", "9 10 11", "12 0 1"}
	if d := cmp.Diff(want, sweep); d != "" {
		t.Errorf("sweep groups (-want +got):\n%s", d)
	}
	if got := len(tr.Measured()); got != 12 {
		t.Errorf("measured %d requests, want 12", got)
	}
	for _, s := range tr.Measured() {
		docs := strings.Fields(s.Tags["docs"])
		seen := map[string]bool{}
		for _, d := range docs {
			seen[d] = true
		}
		if len(docs) != 3 || len(seen) != 3 {
			t.Errorf("%s: documents %v, want 3 distinct", s.ID, docs)
		}
	}
	if got := tr.MaxInFlight(workload.Measure); got != 2 {
		t.Errorf("at most %d in flight, want 2", got)
	}
}

// sampleRequests draws what the original's sample_requests draws from
// Python's random.Random(seed) (values from CPython 3).
func TestSampleRequestsMatchPython(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pool, k, n int
		skew       float64
		seed       int64
		want       [][]int
	}{
		{10, 3, 4, 0, 42, [][]int{{1, 0, 4}, {3, 9, 2}, {1, 8, 9}, {9, 6, 0}}},
		{10, 3, 4, 1.2, 42, [][]int{{2, 0, 1}, {0, 5, 4}, {6, 0, 2}, {0, 1, 4}}},
		{50, 16, 2, 0, 7, [][]int{
			{20, 9, 25, 41, 3, 4, 34, 6, 23, 37, 45, 32, 13, 2, 5, 27},
			{26, 4, 15, 5, 35, 27, 3, 36, 7, 14, 37, 43, 42, 25, 38, 40}}},
	} {
		if d := cmp.Diff(tc.want, sampleRequests(tc.pool, tc.k, tc.n, tc.skew, tc.seed)); d != "" {
			t.Errorf("pool %d k %d skew %v seed %d (-python +go):\n%s", tc.pool, tc.k, tc.skew, tc.seed, d)
		}
	}
}

// A larger skew draws the hot documents more often.
func TestSkewConcentratesReads(t *testing.T) {
	t.Parallel()
	share := func(skew float64) float64 {
		hot, all := 0, 0
		for _, g := range sampleRequests(100, 1, 2000, skew, 3) {
			if g[0] < 10 {
				hot++
			}
			all++
		}
		return float64(hot) / float64(all)
	}
	uniform, skewed := share(0), share(1.2)
	if uniform > 0.15 || skewed < 0.5 {
		t.Errorf("the 10 hottest of 100 documents get %.2f of reads uniformly (want about 0.10) and %.2f at skew 1.2 (want most)", uniform, skewed)
	}
}

// Prompts: the system prompt, then the documents joined by blank lines;
// a document's text is the same in every request, of context-length words.
func TestPromptShape(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, small())
	text := map[string]string{}
	for _, s := range tr.Requests {
		if len(s.Messages) != 2 || s.Messages[0].Role != "system" || s.Messages[1].Role != "user" {
			t.Fatalf("%s: messages %+v", s.ID, s.Messages)
		}
		if n := len(strings.Fields(s.Messages[0].Content)); n != 5 {
			t.Errorf("%s: system prompt of %d words, want 5", s.ID, n)
		}
		docs := strings.Fields(s.Tags["docs"])
		parts := strings.Split(s.Messages[1].Content, "\n\n")
		if len(parts) != len(docs) {
			t.Fatalf("%s: %d documents in the prompt, tags say %v", s.ID, len(parts), docs)
		}
		for i, d := range docs {
			if n := len(strings.Fields(parts[i])); n != 20 {
				t.Errorf("%s: document %s has %d words, want 20", s.ID, d, n)
			}
			if prev, ok := text[d]; ok && prev != parts[i] {
				t.Errorf("%s: document %s differs from its earlier text", s.ID, d)
			}
			text[d] = parts[i]
		}
	}
	if len(text) != 10 {
		t.Errorf("%d distinct documents sent, want the pool of 10", len(text))
	}
}

func TestLRUModel(t *testing.T) {
	t.Parallel()
	m := newLRUModel(2)
	got := []int{m.touch([]int{1}), m.touch([]int{2}), m.touch([]int{1}), m.touch([]int{3}), m.touch([]int{2, 1})}
	// 3 evicts 2 (1 was used after it); then 1 is held, 2 is not.
	if d := cmp.Diff([]int{0, 0, 1, 0, 1}, got); d != "" {
		t.Errorf("resident counts (-want +got):\n%s", d)
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: -1}}, []sdktest.FieldErrorCase{
		{Name: "no capacity", Options: map[string]any{"context-length": 20},
			Want: []option.FieldError{{Option: "pool-size", Message: "pool_size was not given and cannot be derived: no cache capacity is known (--kv-cache-volume 1 GB, -1 tokens per GB). Pass --ktp-pool-size, or --tokens-per-gb-kvcache / --lmcache-url"}}},
	})
	sdktest.CheckFieldErrors(t, Definition, small(), []sdktest.FieldErrorCase{
		{Name: "docs above pool", Options: map[string]any{"pool-size": 3, "docs-per-request": 4}, Want: []option.FieldError{{Option: "docs-per-request",
			Message: "docs_per_request (4) must be <= pool_size (3): a request cannot carry more distinct documents than the pool holds"}}},
		{Name: "overflow 0", Options: map[string]any{"overflow-factor": 0.0}, Want: []option.FieldError{{Option: "overflow-factor", Message: "overflow_factor must be positive, got 0"}}},
		{Name: "pool too large", Options: map[string]any{"pool-size": 1 << 20, "context-length": 1 << 10}, Want: []option.FieldError{{Option: "pool-size",
			Message: "the pool of 1048576 documents of 1024 tokens is 1073741824 tokens of text; at most 268435456 fit: lower --ktp-pool-size, --ktp-overflow-factor or --ktp-context-length"}}},
	})
}

// The tier check sets the cached tokens the engine reports against the
// capacity model: an engine whose lower tier serves what the reported
// capacity cannot hold passes; one that serves only what the capacity
// holds does not; one that reports nothing is named.
func TestTierCheck(t *testing.T) {
	t.Parallel()
	perDoc := 20
	all := func(s sdktest.Sent) sdktest.Reply {
		r := sdktest.DefaultEngine(s)
		r.CachedTokens = r.InputTokens - 1
		return r
	}
	capacityOnly := func(s sdktest.Sent) sdktest.Reply {
		r := sdktest.DefaultEngine(s)
		res, _ := strconv.Atoi(s.Tags["resident"])
		r.CachedTokens = 5 + res*perDoc
		return r
	}
	for name, tc := range map[string]struct {
		engine sdktest.Engine
		level  string
		want   string
	}{
		"lower tier serves": {all, "info", "Tier check: passed: the cache served "},
		"capacity only":     {capacityOnly, "warn", "Tier check: not exercised: the cache served 0% of what the reported capacity could not hold"},
		"nothing reported":  {sdktest.DefaultEngine, "warn", "Tier check: the engine reported no cached tokens"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			log, logs := sdktest.CaptureLogs()
			o := small()
			o.Engine, o.Logger = tc.engine, log
			sdktest.Run(t, Definition, o)
			found := false
			for _, m := range logs.At(t, tc.level) {
				found = found || strings.HasPrefix(m, tc.want)
			}
			if !found {
				t.Errorf("no %s log starting %q in %v", tc.level, tc.want, logs.Lines(t))
			}
		})
	}
}

func TestDocsTagFitsTheHostLimit(t *testing.T) {
	t.Parallel()
	names := make([]string, 300)
	for i := range names {
		names[i] = strconv.Itoa(100000 + i)
	}
	got := docsTag(names)
	if len(got) > 1024 || !strings.HasPrefix(got, "100000 100001 ") || !strings.HasSuffix(got, " more") {
		t.Errorf("docs tag of %d bytes: %q", len(got), got)
	}
	kept := len(strings.Fields(got)) - 2 // "+N" and "more"
	if want := "+" + strconv.Itoa(300-kept) + " more"; !strings.HasSuffix(got, want) {
		t.Errorf("docs tag %q does not end %q", got, want)
	}
	if docsTag([]string{"1", "2"}) != "1 2" {
		t.Errorf("short docs tag %q", docsTag([]string{"1", "2"}))
	}
}

// With --ktp-pool-size and no known capacity the run still goes; the
// banner says the capacity is unknown and no document counts as held.
func TestUnknownCapacity(t *testing.T) {
	t.Parallel()
	o := withOpts(small(), "pool-size", 4)
	o.Common = workload.Common{KVCacheVolumeGB: 1, TokensPerGB: -1}
	tr := sdktest.Run(t, Definition, o)
	for _, f := range tr.Banner {
		if f.Label == "Reported cache" && !strings.HasPrefix(f.Value, "unknown") {
			t.Errorf("banner: reported cache %q", f.Value)
		}
	}
	for _, s := range tr.Requests {
		if s.Tags["resident"] != "0" {
			t.Errorf("%s: resident %q with no capacity", s.ID, s.Tags["resident"])
		}
	}
}
