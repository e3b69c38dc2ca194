package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// twoDocs sizes the run to 2 documents of 100 tokens: 1 GB × 200 tokens/GB / 100.
var twoDocs = workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 200}

func twoDocOptions() map[string]any { return map[string]any{"document-length": 100} }

func TestSchema(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Label, Help string
		Default           any
		Enum              []string
	}
	var got []row
	for _, s := range specs {
		got = append(got, row{s.Name, s.Label, s.Help, s.Default, s.Enum})
	}
	want := []row{
		{"document-length", "Document length (tokens)", "Token length per document.", int64(10000), nil},
		{"query-per-document", "Queries per document", "Questions per document.", int64(2), nil},
		{"shuffle-policy", "Shuffle policy", "Request ordering.", "random", []string{"random", "tile"}},
		{"num-inflight-requests", "Max inflight requests", "Max concurrent in-flight requests, the whole run's: --shard I/N divides it among the shards, which split the documents.", int64(3), nil},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("option schema (-want +got):\n%s", d)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	// Default options; a small KV cache so the run stays cheap.
	tr := sdktest.Run(t, Definition, sdktest.Options{Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 20000}})
	want := map[string]any{
		"document-length": int64(10000), "query-per-document": int64(2),
		"shuffle-policy": "random", "num-inflight-requests": int64(3), "num-documents": int64(2),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
}

func TestConfigCustom(t *testing.T) {
	t.Parallel()
	// test_create_workload's custom case: 10 GB × 10000 tokens/GB / 5000 = 20 documents.
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 5000, "query-per-document": 4, "shuffle-policy": "tile", "num-inflight-requests": 8},
		Common:  workload.Common{KVCacheVolumeGB: 10, TokensPerGB: 10000},
	})
	want := map[string]any{
		"document-length": int64(5000), "query-per-document": int64(4),
		"shuffle-policy": "tile", "num-inflight-requests": int64(8), "num-documents": int64(20),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if tr.Planned != 80 || len(tr.Warmup()) != 20 || len(tr.Measured()) != 80 {
		t.Errorf("planned %d, warmup %d, measured %d; want 80, 20, 80", tr.Planned, len(tr.Warmup()), len(tr.Measured()))
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{Common: twoDocs}, []sdktest.FieldErrorCase{
		{Name: "document length 0", Options: map[string]any{"document-length": 0},
			Want: []option.FieldError{{Option: "document-length", Message: "document_length must be positive, got 0"}}},
		{Name: "document length -1", Options: map[string]any{"document-length": -1},
			Want: []option.FieldError{{Option: "document-length", Message: "document_length must be positive, got -1"}}},
		{Name: "queries 0", Options: map[string]any{"query-per-document": 0},
			Want: []option.FieldError{{Option: "query-per-document", Message: "query_per_document must be >= 1, got 0"}}},
		{Name: "inflight 0", Options: map[string]any{"num-inflight-requests": 0},
			Want: []option.FieldError{{Option: "num-inflight-requests", Message: "num_inflight_requests must be >= 1, got 0"}}},
		{Name: "policy unknown", Options: map[string]any{"shuffle-policy": "unknown"},
			Want: []option.FieldError{{Option: "shuffle-policy", Message: "shuffle_policy must be 'random' or 'tile', got 'unknown'"}}},
		{Name: "all reported together", Options: map[string]any{"document-length": 0, "num-inflight-requests": -2},
			Want: []option.FieldError{
				{Option: "document-length", Message: "document_length must be positive, got 0"},
				{Option: "num-inflight-requests", Message: "num_inflight_requests must be >= 1, got -2"},
			}},
	})
}

func TestValidateShufflePolicy(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"random", "tile"} {
		o := Definition.Defaults
		o.ShufflePolicy = policy
		if err := o.Validate(); err != nil {
			t.Errorf("policy %q: %v", policy, err)
		}
	}
	o := Definition.Defaults
	o.ShufflePolicy = "unknown"
	got := option.FieldErrors(o.Validate())
	want := []*option.FieldError{{Option: "shuffle-policy", Message: "shuffle_policy must be 'random' or 'tile', got 'unknown'"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestNumDocuments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		kv          float64
		tokensPerGB int64
		docLength   int
		want        int
	}{
		{"defaults resolve to 500", 100, 50000, 10000, 500},
		{"floor", 1, 10000, 3000, 3},
		{"at least one", 0.001, 1, 10000, 1},
		{"custom", 10, 10000, 5000, 20},
		{"demo", 1, 8192, 2000, 4},
		{"float product", 0.1, 30, 1, 3}, // 0.1*30 = 3.0000000000000004 in float64
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := numDocuments(tc.kv, tc.tokensPerGB, tc.docLength)
			if err != nil || got != tc.want {
				t.Errorf("numDocuments(%v, %d, %d) = %d, %v; want %d", tc.kv, tc.tokensPerGB, tc.docLength, got, err, tc.want)
			}
		})
	}
	if _, err := numDocuments(1e12, 1e9, 1); err == nil {
		t.Error("an absurd document count was accepted")
	}
}

func TestResolveDefaults(t *testing.T) {
	t.Parallel()
	// New is cheap (documents are built on first use), so the full default
	// size can be checked without running it.
	wl, err := Definition.New(Definition.Defaults, workload.Env{
		Common: workload.Common{Seed: 42, KVCacheVolumeGB: 100, TokensPerGB: 50000},
		Logger: zerolog.Nop(), Content: workload.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wl.(workload.Resolver).Resolved(); !cmp.Equal(got, map[string]any{"num-documents": 500}) {
		t.Errorf("Resolved() = %v, want num-documents 500", got)
	}
	if got := wl.(workload.Planner).PlannedRequests(); got != 1000 {
		t.Errorf("PlannedRequests() = %d, want 1000", got)
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 2000, "shuffle-policy": "tile"},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 8192},
	})
	want := []workload.Field{
		{Label: "Documents", Value: "4"},
		{Label: "Queries/doc", Value: "2"},
		{Label: "Total requests", Value: "8"},
		{Label: "Document length", Value: "2000 tokens"},
		{Label: "Max inflight", Value: "3"},
		{Label: "Shuffle policy", Value: "tile"},
	}
	if d := cmp.Diff(want, tr.Banner); d != "" {
		t.Errorf("banner (-want +got):\n%s", d)
	}
	if tr.Title != "long-doc-qa" {
		t.Errorf("title %q", tr.Title)
	}
}

func TestDocuments(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: twoDocOptions(), Common: twoDocs})
	warm := tr.Warmup()
	if len(warm) != 2 {
		t.Fatalf("%d documents warmed up, want 2", len(warm))
	}
	for i, s := range warm {
		c := sdktest.UserText(t, s)
		if prefix := fmt.Sprintf("Document %d: ", i); !strings.HasPrefix(c, prefix) {
			t.Errorf("document %d starts %.20q, want prefix %q", i, c, prefix)
		}
		words := strings.Fields(c)
		if n := len(words) - 2; n != 90 || slices.ContainsFunc(words[2:], func(w string) bool { return w != "hi" }) {
			t.Errorf("document %d: want 90 \"hi\" after the header, got %d words %q…", i, n, words[:min(len(words), 5)])
		}
		if !strings.HasSuffix(c, " hi") || strings.Contains(c, "  ") {
			t.Errorf("document %d is not single-space joined", i)
		}
	}
	if got := documentText(3, fillerBody(5-10)); got != "Document 3: hi" {
		t.Errorf("a document shorter than its header has %q, want one \"hi\"", got)
	}
}

// TestDocumentsCrossOnce checks each document is registered once, with the
// request that first uses it, and that requests reference it.
func TestDocumentsCrossOnce(t *testing.T) {
	t.Parallel()
	reg := workload.NewRegistry()
	o := Definition.Defaults
	o.DocumentLength = 100
	wl, err := Definition.New(o, workload.Env{Common: workload.Common{Seed: 42, KVCacheVolumeGB: 1, TokensPerGB: 200}, Logger: zerolog.Nop(), Content: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := reg.Drain(); len(got) != 0 {
		t.Fatalf("New registered %d contents; documents should travel with their first request", len(got))
	}
	var registered []string
	for {
		out, err := wl.Step(ctx, workload.StepInput{Phase: workload.Warmup})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range reg.Drain() {
			registered = append(registered, c.ID)
		}
		if len(out.Requests) == 0 {
			break
		}
	}
	var refs []string
	for range 10 {
		out, err := wl.Step(ctx, workload.StepInput{Phase: workload.Measure})
		if err != nil {
			t.Fatal(err)
		}
		if c := reg.Drain(); len(c) != 0 {
			t.Errorf("measure step registered %d contents again", len(c))
		}
		for _, r := range out.Requests {
			refs = append(refs, r.Messages[0].Content[0].Ref)
		}
	}
	if d := cmp.Diff([]string{"doc0", "doc1"}, registered); d != "" {
		t.Errorf("registered (-want +got):\n%s", d)
	}
	slices.Sort(refs)
	if d := cmp.Diff([]string{"doc0", "doc0", "doc1", "doc1"}, refs); d != "" {
		t.Errorf("measured requests reference (-want +got):\n%s", d)
	}
}

func TestScheduleTile(t *testing.T) {
	t.Parallel()
	want := []pair{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	if d := cmp.Diff(want, schedule(2, 2, "tile", 42)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestScheduleRandom(t *testing.T) {
	t.Parallel()
	tile := schedule(5, 3, "tile", 42)
	got := schedule(5, 3, "random", 42)
	if len(got) != 15 {
		t.Fatalf("schedule length %d, want 15", len(got))
	}
	if slices.Equal(got, tile) {
		t.Error("random order equals tile order")
	}
	sorted := slices.Clone(got)
	slices.SortFunc(sorted, func(a, b pair) int {
		if a.Query != b.Query {
			return a.Query - b.Query
		}
		return a.Doc - b.Doc
	})
	if d := cmp.Diff(tile, sorted); d != "" {
		t.Errorf("random order is not a permutation of tile (-want +got):\n%s", d)
	}
	if again := schedule(5, 3, "random", 42); !slices.Equal(got, again) {
		t.Error("same seed, different order")
	}
	if other := schedule(5, 3, "random", 43); slices.Equal(got, other) {
		t.Error("seeds 42 and 43 give the same order")
	}
}

// TestRandomOrderMatchesPython pins the measured order to CPython's. The
// expected lists were generated with python3 (3.11):
//
//	pairs = [(d, q) for q in range(3) for d in range(5)]
//	random.Random(42).shuffle(pairs)
//	pairs = [(d, q) for q in range(2) for d in range(4)]
//	random.Random(7).shuffle(pairs)
func TestRandomOrderMatchesPython(t *testing.T) {
	t.Parallel()
	tests := []struct {
		docs, queries int
		seed          int64
		want          []pair
	}{
		{5, 3, 42, []pair{{3, 1}, {3, 2}, {2, 1}, {1, 1}, {4, 2}, {2, 2}, {0, 1}, {2, 0}, {4, 1}, {3, 0}, {4, 0}, {1, 2}, {0, 0}, {1, 0}, {0, 2}}},
		{4, 2, 7, []pair{{2, 1}, {3, 1}, {2, 0}, {0, 1}, {0, 0}, {3, 0}, {1, 0}, {1, 1}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dx%d seed %d", tc.docs, tc.queries, tc.seed), func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tc.want, schedule(tc.docs, tc.queries, "random", tc.seed)); d != "" {
				t.Errorf("schedule (-want +got):\n%s", d)
			}
			// And the requests go out in that order.
			tr := sdktest.Run(t, Definition, sdktest.Options{
				Options: map[string]any{"document-length": 100, "query-per-document": tc.queries},
				Common:  workload.Common{Seed: tc.seed, KVCacheVolumeGB: 1, TokensPerGB: int64(100 * tc.docs)},
			})
			var wantIDs []string
			for _, p := range tc.want {
				wantIDs = append(wantIDs, fmt.Sprintf("doc%d_q%d", p.Doc, p.Query))
			}
			if d := cmp.Diff(wantIDs, sdktest.IDs(tr.Measured())); d != "" {
				t.Errorf("measured ids (-want +got):\n%s", d)
			}
		})
	}
}

func TestMessageFormat(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 100, "query-per-document": 5, "shuffle-policy": "tile"},
		Common:  twoDocs,
	})
	byID := map[string]sdktest.Sent{}
	for _, s := range tr.Measured() {
		byID[s.ID] = s
	}
	doc1 := documentText(1, fillerBody(90))
	for _, tc := range []struct{ id, want string }{
		{"doc1_q0", doc1 + "\n\nQuestion 0: What is this document about?"},
		{"doc1_q1", doc1 + "\n\nQuestion 1: Summarize the key points."},
		{"doc1_q2", doc1 + "\n\nQuestion 2: What is the main topic discussed?"},
		{"doc1_q3", doc1 + "\n\nQuestion 3: Provide a brief overview."},
		{"doc1_q4", doc1 + "\n\nQuestion 4: What is this document about?"},
	} {
		s, ok := byID[tc.id]
		if !ok {
			t.Fatalf("no request %s", tc.id)
		}
		if got := sdktest.UserText(t, s); got != tc.want {
			t.Errorf("%s: content ends %q, want %q", tc.id, got[len(doc1):], tc.want[len(doc1):])
		}
		if s.MaxTokens != workload.DefaultMaxTokens {
			t.Errorf("%s: max_tokens %d, want %d", tc.id, s.MaxTokens, workload.DefaultMaxTokens)
		}
		if d := cmp.Diff(map[string]string{"doc": "1", "query": tc.id[len(tc.id)-1:]}, s.Tags); d != "" {
			t.Errorf("%s: tags (-want +got):\n%s", tc.id, d)
		}
	}
}

func TestWarmup(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 100}, Common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 300},
		Engine: sdktest.OutOfOrderEngine, Logger: log,
	})
	warm := tr.Warmup()
	if d := cmp.Diff([]string{"warmup_doc0", "warmup_doc1", "warmup_doc2"}, sdktest.IDs(warm)); d != "" {
		t.Errorf("warmup ids (-want +got):\n%s", d)
	}
	for i, s := range warm {
		if c := sdktest.UserText(t, s); c != documentText(i, fillerBody(90)) {
			t.Errorf("%s: sends %.40q…, want the document only", s.ID, c)
		}
		if s.MaxTokens != 1 {
			t.Errorf("%s: max_tokens %d, want 1", s.ID, s.MaxTokens)
		}
		if d := cmp.Diff(map[string]string{"doc": fmt.Sprint(i)}, s.Tags); d != "" {
			t.Errorf("%s: tags (-want +got):\n%s", s.ID, d)
		}
	}
	if got := tr.MaxInFlight(workload.Warmup); got != 1 {
		t.Errorf("warmup had %d requests in flight at once, want 1", got)
	}
	wantInfo := []string{"Warmup 1/3", "Warmup 2/3", "Warmup 3/3", "Warmup complete: 3 documents sent"}
	if d := cmp.Diff(wantInfo, logs.At(t, "info")); d != "" {
		t.Errorf("info logs (-want +got):\n%s", d)
	}
}

func TestWarmupFailureLogged(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	failing := func(s sdktest.Sent) sdktest.Reply {
		if s.ID == "warmup_doc1" || s.ID == "doc0_q0" {
			return sdktest.Reply{Error: "HTTP 500: engine, \"overloaded\"", Latency: time.Millisecond}
		}
		return sdktest.DefaultEngine(s)
	}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: twoDocOptions(), Common: twoDocs, Engine: failing, Logger: log})
	want := []string{`Warmup warmup_doc1 failed: HTTP 500: engine, "overloaded"`}
	if d := cmp.Diff(want, logs.At(t, "warn")); d != "" {
		t.Errorf("warn logs (-want +got):\n%s", d)
	}
	// A failed warmup does not stop the run.
	if len(tr.Warmup()) != 2 || len(tr.Measured()) != 4 {
		t.Errorf("warmup %d, measured %d; want 2, 4", len(tr.Warmup()), len(tr.Measured()))
	}
}

func TestDispatchBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 3, 5, 100} {
		t.Run(fmt.Sprint("inflight ", limit), func(t *testing.T) {
			t.Parallel()
			log, logs := sdktest.CaptureLogs()
			// 6 documents × 3 queries = 18 requests.
			tr := sdktest.Run(t, Definition, sdktest.Options{
				Options: map[string]any{"document-length": 100, "query-per-document": 3, "num-inflight-requests": limit},
				Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 600},
				Engine:  sdktest.OutOfOrderEngine, Logger: log,
			})
			measured := tr.Measured()
			if len(measured) != 18 {
				t.Fatalf("%d measured, want 18", len(measured))
			}
			if got, want := tr.MaxInFlight(workload.Measure), min(limit, 18); got != want {
				t.Errorf("at most %d in flight at once, want exactly %d", got, want)
			}
			var wantDebug []string
			for _, s := range measured {
				d, q := s.Tags["doc"], s.Tags["query"]
				wantDebug = append(wantDebug, fmt.Sprintf("Dispatched request doc%s_q%s (doc %s, query %s)", d, q, d, q))
			}
			if d := cmp.Diff(wantDebug, logs.At(t, "debug")); d != "" {
				t.Errorf("debug logs (-want +got):\n%s", d)
			}
		})
	}
}

func TestFullRun(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: twoDocOptions(), Common: twoDocs})
	if len(tr.Warmup()) != 2 || len(tr.Measured()) != 4 || tr.Planned != 4 {
		t.Errorf("warmup %d, measured %d, planned %d; want 2, 4, 4", len(tr.Warmup()), len(tr.Measured()), tr.Planned)
	}
	if len(tr.Results) != 6 {
		t.Errorf("%d results delivered, want 6", len(tr.Results))
	}
}

// TestDemoConfig is `make demo`'s configuration, through real gRPC:
// 1 GB × 8192 tokens/GB / 2000 = 4 documents × 2 queries.
func TestDemoConfig(t *testing.T) {
	t.Parallel()
	tr := sdktest.RunGRPC(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 2000},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 8192},
		Engine:  sdktest.OutOfOrderEngine,
	})
	if len(tr.Warmup()) != 4 || len(tr.Measured()) != 8 || tr.Planned != 8 {
		t.Errorf("warmup %d, measured %d, planned %d; want 4, 8, 8", len(tr.Warmup()), len(tr.Measured()), tr.Planned)
	}
	if got := tr.Resolved["num-documents"]; got != int64(4) {
		t.Errorf("num-documents = %v, want 4", got)
	}
	if got := tr.MaxInFlight(workload.Measure); got != 3 {
		t.Errorf("%d in flight at most, want 3", got)
	}
}

// TestGoldenTranscript pins the whole request stream of a tiny run
// (2 documents of 12 tokens, 2 queries, random order, seed 42). Rewrite
// with `go test -run TestGoldenTranscript -update`.
func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.RunGRPC(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 12},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 24},
	})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}
