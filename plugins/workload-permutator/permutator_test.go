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
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// small is a cheap configuration: 3 contexts of 100 words, a 20-word system
// prompt, every one of the 3! = 6 orderings.
func small() map[string]any {
	return map[string]any{"num-contexts": 3, "context-length": 100, "system-prompt-length": 20}
}

// newDirect builds the workload for tests that call Step themselves.
func newDirect(t *testing.T, o Options, seed int64) (*permutator, *workload.Registry) {
	t.Helper()
	reg := workload.NewRegistry()
	wl, err := Definition.New(o, workload.Env{Common: workload.Common{Seed: seed}, Logger: zerolog.Nop(), Content: reg})
	if err != nil {
		t.Fatal(err)
	}
	return wl.(*permutator), reg
}

// text resolves a message's segments against the registry.
func text(t *testing.T, reg *workload.Registry, m workload.Message) string {
	t.Helper()
	var b strings.Builder
	for _, s := range m.Content {
		if s.Ref == "" {
			b.WriteString(s.Text)
			continue
		}
		v, ok := reg.Lookup(s.Ref)
		if !ok {
			t.Fatalf("unregistered content %q", s.Ref)
		}
		b.WriteString(v)
	}
	return b.String()
}

func TestSchema(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name    string
		Default any
	}
	var got []row
	for _, s := range specs {
		got = append(got, row{s.Name, s.Default})
		if s.Help == "" || s.Label == "" {
			t.Errorf("%s has no help or label", s.Name)
		}
	}
	want := []row{
		{"num-contexts", int64(5)}, {"context-length", int64(5000)}, {"system-prompt-length", int64(1000)},
		{"num-permutations", int64(10)}, {"num-inflight-requests", int64(1)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("option schema (-want +got):\n%s", d)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	w, _ := newDirect(t, Definition.Defaults, 42)
	if w.o != (Options{5, 5000, 1000, 10, 1}) {
		t.Errorf("defaults %+v", w.o)
	}
	if d := cmp.Diff(map[string]any{"permutations": 10, "vocab-size": 8000}, w.Resolved()); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if w.PlannedRequests() != 10 || w.next != 0 {
		t.Errorf("planned %d, index %d; want 10, 0", w.PlannedRequests(), w.next)
	}
}

func TestConfigCustom(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{
		"num-contexts": 3, "context-length": 200, "system-prompt-length": 0, "num-permutations": 4, "num-inflight-requests": 2,
	}})
	want := map[string]any{
		"num-contexts": int64(3), "context-length": int64(200), "system-prompt-length": int64(0),
		"num-permutations": int64(4), "num-inflight-requests": int64(2), "permutations": int64(4), "vocab-size": int64(8000),
	}
	if d := cmp.Diff(want, tr.Resolved); d != "" {
		t.Errorf("resolved (-want +got):\n%s", d)
	}
	if tr.Planned != 4 || len(tr.Warmup()) != 1 || len(tr.Measured()) != 4 {
		t.Errorf("planned %d, warmup %d, measured %d; want 4, 1, 4", tr.Planned, len(tr.Warmup()), len(tr.Measured()))
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{}, []sdktest.FieldErrorCase{
		{Name: "contexts 0", Options: map[string]any{"num-contexts": 0},
			Want: []option.FieldError{{Option: "num-contexts", Message: "num_contexts must be >= 1, got 0"}}},
		{Name: "contexts -1", Options: map[string]any{"num-contexts": -1},
			Want: []option.FieldError{{Option: "num-contexts", Message: "num_contexts must be >= 1, got -1"}}},
		{Name: "length 0", Options: map[string]any{"context-length": 0},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be positive, got 0"}}},
		{Name: "length -5", Options: map[string]any{"context-length": -5},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be positive, got -5"}}},
		{Name: "permutations 0", Options: map[string]any{"num-permutations": 0},
			Want: []option.FieldError{{Option: "num-permutations", Message: "num_permutations must be >= 1, got 0"}}},
		{Name: "inflight 0", Options: map[string]any{"num-inflight-requests": 0},
			Want: []option.FieldError{{Option: "num-inflight-requests", Message: "num_inflight_requests must be >= 1, got 0"}}},
		{Name: "negative system prompt", Options: map[string]any{"system-prompt-length": -1},
			Want: []option.FieldError{{Option: "system-prompt-length", Message: "must be >= 0, got -1"}}},
		{Name: "all reported together", Options: map[string]any{"num-contexts": 0, "num-inflight-requests": -2},
			Want: []option.FieldError{
				{Option: "num-contexts", Message: "num_contexts must be >= 1, got 0"},
				{Option: "num-inflight-requests", Message: "num_inflight_requests must be >= 1, got -2"},
			}},
		{Name: "context too long", Options: map[string]any{"context-length": 1<<24 + 1},
			Want: []option.FieldError{{Option: "context-length", Message: "context_length must be at most 16777216 tokens, got 16777217"}}},
		{Name: "contexts too long together", Options: map[string]any{"num-contexts": 100000000, "context-length": 10},
			Want: []option.FieldError{{Option: "num-contexts", Message: "num_contexts x context_length = 100000000 x 10 tokens in every request, more than the 16777216 supported; lower either"}}},
		{Name: "system prompt too long", Options: map[string]any{"system-prompt-length": 2000000000},
			Want: []option.FieldError{{Option: "system-prompt-length", Message: "system_prompt_length must be at most 16777216 tokens, got 2000000000"}}},
		{Name: "too many permutations", Options: map[string]any{"num-contexts": 12, "num-permutations": 2000000},
			Want: []option.FieldError{{Option: "num-permutations", Message: "num_permutations = 2000000 would send 2000000 requests, more than the 1048576 supported; lower it"}}},
	})
	// vocab_size has no flag; the original's check stays.
	got := option.FieldErrors(validate(Definition.Defaults, 0))
	if d := cmp.Diff([]*option.FieldError{{Message: "vocab_size must be >= 1, got 0"}}, got); d != "" {
		t.Errorf("vocab 0 (-want +got):\n%s", d)
	}
	// Many permutations are fine when N! caps them.
	if _, err := sdktest.RunE(Definition, sdktest.Options{Options: map[string]any{"num-contexts": 2, "context-length": 5, "num-permutations": 1 << 30}}); err != nil {
		t.Errorf("num-permutations capped at 2! was rejected: %v", err)
	}
}

func TestSeedOverflow(t *testing.T) {
	t.Parallel()
	env := func(seed int64) workload.Env {
		return workload.Env{Common: workload.Common{Seed: seed}, Logger: zerolog.Nop(), Content: workload.NewRegistry()}
	}
	if _, err := Definition.New(Definition.Defaults, env(1<<63-6)); err != nil {
		t.Errorf("the largest seed for 5 contexts was rejected: %v", err)
	}
	_, err := Definition.New(Definition.Defaults, env(1<<63-3))
	if err == nil || err.Error() != "--seed 9223372036854775805 is too large: context i is drawn with seed+1+i, so for 5 contexts the seed must be at most 9223372036854775802" {
		t.Errorf("got %v, want a seed error", err)
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{
		"num-contexts": 4, "context-length": 30, "system-prompt-length": 0, "num-permutations": 100, "num-inflight-requests": 3,
	}})
	want := []workload.Field{
		{Label: "Contexts", Value: "4"},
		{Label: "Context length", Value: "30 tokens"},
		{Label: "System prompt", Value: "0 tokens"},
		{Label: "Permutations", Value: "24 (of 24 possible)"},
		{Label: "Total requests", Value: "24"},
		{Label: "Vocab size", Value: "8000"},
		{Label: "Max inflight", Value: "3"},
	}
	if d := cmp.Diff(want, tr.Banner); d != "" {
		t.Errorf("banner (-want +got):\n%s", d)
	}
	if tr.Title != "long-doc-permutator" {
		t.Errorf("title %q", tr.Title)
	}
	// N! is exact however large.
	w, _ := newDirect(t, Options{NumContexts: 25, ContextLength: 1, NumPermutations: 3, NumInflightRequests: 1}, 42)
	if got := w.Banner()[3].Value; got != "3 (of 15511210043330985984000000 possible)" {
		t.Errorf("permutations line %q", got)
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	if got := systemPrompt(0, 42); got != "" {
		t.Errorf("length 0 gives %q", got)
	}
	p := systemPrompt(50, 42)
	words := strings.Split(p, " ")
	if len(words) != 50 {
		t.Fatalf("%d words, want 50", len(words))
	}
	for _, w := range words {
		if !slices.Contains(systemWords, w) {
			t.Errorf("word %q is not one of the 13", w)
		}
	}
	if p != systemPrompt(50, 42) {
		t.Error("not deterministic")
	}
	if p == systemPrompt(50, 43) {
		t.Error("seeds 42 and 43 give the same prompt")
	}
}

func TestContexts(t *testing.T) {
	t.Parallel()
	w, reg := newDirect(t, Options{NumContexts: 4, ContextLength: 100, NumPermutations: 1, NumInflightRequests: 1}, 42)
	pool := pseudoword.Vocab(vocabSize, 42)
	var texts []string
	for i := range 4 {
		c := text(t, reg, workload.User(w.context(i)))
		if c != contextText(i, 100, pool, 42) {
			t.Errorf("context %d differs from contextText", i)
		}
		words := strings.Split(c, " ")
		if len(words) != 100 {
			t.Errorf("context %d has %d words, want 100", i, len(words))
		}
		for _, wd := range words {
			if _, ok := slices.BinarySearch(pool, wd); !ok {
				t.Fatalf("context %d: word %q not in the pool", i, wd)
			}
		}
		texts = append(texts, c)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(texts)))) != 4 {
		t.Error("contexts are not distinct")
	}
	// Context i uses seed+1+i: context 0 of seed 42 is context 1 of seed 41's stream over the same pool.
	if contextText(0, 100, pool, 42) != contextText(1, 100, pool, 41) {
		t.Error("context 0 does not use Random(seed+1)")
	}
	if contextText(2, 100, pool, 42) != contextText(2, 100, pool, 42) {
		t.Error("not deterministic")
	}
}

func isPermutation(p []int, n int) bool {
	s := slices.Sorted(slices.Values(p))
	for i, v := range s {
		if v != i {
			return false
		}
	}
	return len(p) == n
}

func TestPermutations(t *testing.T) {
	t.Parallel()
	all := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	if d := cmp.Diff(all, permutations(3, 10, 42)); d != "" {
		t.Errorf("all 6 when small (-want +got):\n%s", d)
	}
	if d := cmp.Diff(all[:4], permutations(3, 4, 42)); d != "" {
		t.Errorf("capped at 4 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]int{{0}}, permutations(1, 5, 42)); d != "" {
		t.Errorf("N=1 (-want +got):\n%s", d)
	}
	for _, c := range []struct{ n, k int }{{5, 11}, {6, 30}, {8, 200}, {20, 50}} {
		got := permutations(c.n, c.k, 42)
		if len(got) != c.k {
			t.Fatalf("n=%d k=%d: %d permutations", c.n, c.k, len(got))
		}
		for _, p := range got {
			if !isPermutation(p, c.n) {
				t.Fatalf("n=%d: %v is not a permutation", c.n, p)
			}
		}
		if !slices.IsSortedFunc(got, slices.Compare) {
			t.Errorf("n=%d k=%d: sampled permutations are not sorted", c.n, c.k)
		}
		if len(slices.CompactFunc(slices.Clone(got), slices.Equal)) != c.k {
			t.Errorf("n=%d k=%d: duplicates", c.n, c.k)
		}
		if d := cmp.Diff(got, permutations(c.n, c.k, 42)); d != "" {
			t.Errorf("n=%d k=%d: not deterministic", c.n, c.k)
		}
		if cmp.Equal(got, permutations(c.n, c.k, 43)) {
			t.Errorf("n=%d k=%d: seeds 42 and 43 sample the same set", c.n, c.k)
		}
	}
	// 5! = 120 is not more than 10 × 12: the first 12 in lexicographic order.
	if got := permutations(5, 12, 42); !slices.Equal(got[11], []int{0, 2, 4, 3, 1}) {
		t.Errorf("n=5 k=12 ends with %v, want the 12th lexicographic ordering", got[11])
	}
}

func TestInit(t *testing.T) {
	t.Parallel()
	w, reg := newDirect(t, Options{NumContexts: 3, ContextLength: 10, SystemPromptLength: 20, NumPermutations: 4, NumInflightRequests: 1}, 42)
	if len(w.perms) != 4 || len(w.contexts) != 3 || w.next != 0 {
		t.Errorf("%d permutations, %d contexts, index %d; want 4, 3, 0", len(w.perms), len(w.contexts), w.next)
	}
	msgs := w.messages(w.perms[0])
	if got := strings.Fields(text(t, reg, msgs[0])); len(got) != 20 || msgs[0].Role != "system" {
		t.Errorf("system prompt: role %s, %d words; want system, 20", msgs[0].Role, len(got))
	}
	w2, _ := newDirect(t, Options{NumContexts: 2, ContextLength: 10, SystemPromptLength: 0, NumPermutations: 10, NumInflightRequests: 1}, 42)
	if len(w2.perms) != 2 {
		t.Errorf("2 contexts give %d permutations, want both", len(w2.perms))
	}
	if msgs := w2.messages(w2.perms[0]); len(msgs) != 1 || msgs[0].Role != "user" {
		t.Errorf("no system message expected when its length is 0, got %+v", msgs)
	}
}

// TestRequests checks every measured request: the system prompt first, then
// one user message with every context in the permutation's order.
func TestRequests(t *testing.T) {
	t.Parallel()
	w, _ := newDirect(t, Options{NumContexts: 3, ContextLength: 100, SystemPromptLength: 20, NumPermutations: 6, NumInflightRequests: 1}, 42)
	pool := pseudoword.Vocab(vocabSize, 42)
	ctx := []string{contextText(0, 100, pool, 42), contextText(1, 100, pool, 42), contextText(2, 100, pool, 42)}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small()})
	measured := tr.Measured()
	if len(measured) != 6 {
		t.Fatalf("%d measured requests, want 6", len(measured))
	}
	orders := map[string]bool{}
	for i, s := range measured {
		p := w.perms[i]
		if s.ID != fmt.Sprintf("perm%d_req%d", i, i) {
			t.Errorf("request %d has id %s", i, s.ID)
		}
		if len(s.Messages) != 2 || s.Messages[0].Role != "system" || s.Messages[1].Role != "user" {
			t.Fatalf("%s: roles %+v", s.ID, s.Messages)
		}
		if s.Messages[0].Content != systemPrompt(20, 42) {
			t.Errorf("%s: system prompt differs", s.ID)
		}
		want := ctx[p[0]] + "\n\n" + ctx[p[1]] + "\n\n" + ctx[p[2]]
		if s.Messages[1].Content != want {
			t.Errorf("%s: user message is not contexts %v joined by blank lines", s.ID, p)
		}
		if d := cmp.Diff(map[string]string{"perm": fmt.Sprint(i), "order": orderTag(p)}, s.Tags); d != "" {
			t.Errorf("%s: tags (-want +got):\n%s", s.ID, d)
		}
		if s.MaxTokens != workload.DefaultMaxTokens {
			t.Errorf("%s: max_tokens %d, want %d", s.ID, s.MaxTokens, workload.DefaultMaxTokens)
		}
		orders[s.Tags["order"]] = true
	}
	if len(orders) != 6 {
		t.Errorf("orders are not distinct: %v", orders)
	}
}

func TestOrderTag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    []int
		want string
	}{{[]int{2, 0, 1}, "2-0-1"}, {[]int{0}, "0"}, {[]int{10, 9, 11}, "10-9-11"}} {
		if got := orderTag(c.p); got != c.want {
			t.Errorf("orderTag(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestWarmup(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small(), Engine: sdktest.OutOfOrderEngine, Logger: log})
	warm := tr.Warmup()
	if d := cmp.Diff([]string{"warmup_0"}, sdktest.IDs(warm)); d != "" {
		t.Fatalf("warmup ids (-want +got):\n%s", d)
	}
	want := []sdktest.Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: strings.TrimSpace(strings.Repeat("warmup ", 500))}}
	if d := cmp.Diff(want, warm[0].Messages); d != "" {
		t.Errorf("warmup messages (-want +got):\n%s", d)
	}
	if warm[0].MaxTokens != 1 {
		t.Errorf("warmup max_tokens %d, want 1", warm[0].MaxTokens)
	}
	if d := cmp.Diff([]string{"Warmup 1/1", "Warmup complete: 1 dummy request"}, logs.At(t, "info")); d != "" {
		t.Errorf("info logs (-want +got):\n%s", d)
	}
}

func TestWarmupFailureLogged(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	failing := func(s sdktest.Sent) sdktest.Reply {
		if s.ID == "warmup_0" || s.ID == "perm1_req1" {
			return sdktest.Reply{Error: "HTTP 500: engine overloaded", Latency: time.Millisecond}
		}
		return sdktest.DefaultEngine(s)
	}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small(), Engine: failing, Logger: log})
	if d := cmp.Diff([]string{"Warmup request failed: HTTP 500: engine overloaded"}, logs.At(t, "warn")); d != "" {
		t.Errorf("warn logs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Warmup 1/1", "Warmup complete: 1 dummy request"}, logs.At(t, "info")); d != "" {
		t.Errorf("info logs (-want +got):\n%s", d)
	}
	// A failed warmup does not stop the run.
	if len(tr.Warmup()) != 1 || len(tr.Measured()) != 6 {
		t.Errorf("warmup %d, measured %d; want 1, 6", len(tr.Warmup()), len(tr.Measured()))
	}
}

// TestStep drives Step directly: one dispatch per free slot, a wait while
// every slot is busy, and the end once all permutations are out.
func TestStep(t *testing.T) {
	t.Parallel()
	w, _ := newDirect(t, Options{NumContexts: 3, ContextLength: 5, NumPermutations: 6, NumInflightRequests: 1}, 42)
	ctx := context.Background()
	step := func(inFlight int) string {
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, InFlight: inFlight})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := step(0); got != "send [perm0_req0], then wait for a finish" || w.next != 1 {
		t.Errorf("first step: %s, index %d", got, w.next)
	}
	if got := step(1); got != "send [], then wait for a finish" || w.next != 1 {
		t.Errorf("step with the slot busy: %s, index %d", got, w.next)
	}
	for i := 1; i < 5; i++ {
		if got, want := step(0), fmt.Sprintf("send [perm%d_req%d], then wait for a finish", i, i); got != want {
			t.Errorf("step %d: %s, want %s", i, got, want)
		}
	}
	if got := step(0); got != "send [perm5_req5], then done" {
		t.Errorf("last step: %s", got)
	}
	if err := w.OnFinished(ctx, []workload.Result{{ID: "perm0_req0", Phase: workload.Measure, Success: true}}); err != nil {
		t.Errorf("OnFinished: %v", err)
	}
	if _, err := w.Step(ctx, workload.StepInput{Phase: 0}); err == nil {
		t.Error("an unknown phase was accepted")
	}
}

func TestDispatchBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 3, 5, 100} {
		t.Run(fmt.Sprint("inflight ", limit), func(t *testing.T) {
			t.Parallel()
			log, logs := sdktest.CaptureLogs()
			tr := sdktest.Run(t, Definition, sdktest.Options{
				Options: map[string]any{"num-contexts": 4, "context-length": 10, "system-prompt-length": 5, "num-permutations": 18, "num-inflight-requests": limit},
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
			for i := range 18 {
				wantDebug = append(wantDebug, fmt.Sprintf("Dispatched permutation %d", i))
			}
			debug := logs.At(t, "debug")
			if len(debug) == 0 || debug[0] != "LongDocPermutator: 4 contexts x 18 permutations = 18 requests" {
				t.Fatalf("debug logs start %q", debug[:min(len(debug), 1)])
			}
			if d := cmp.Diff(wantDebug, debug[1:]); d != "" {
				t.Errorf("debug logs (-want +got):\n%s", d)
			}
			if d := cmp.Diff(sdktest.IDs(measured), idsInOrder(18)); d != "" {
				t.Errorf("ids (-got +want):\n%s", d)
			}
		})
	}
}

func idsInOrder(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("perm%d_req%d", i, i))
	}
	return out
}

func TestFullRun(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small()})
	if len(tr.Warmup()) != 1 || len(tr.Measured()) != 6 || tr.Planned != 6 {
		t.Errorf("warmup %d, measured %d, planned %d; want 1, 6, 6", len(tr.Warmup()), len(tr.Measured()), tr.Planned)
	}
	if len(tr.Results) != 7 {
		t.Errorf("%d results delivered, want 7", len(tr.Results))
	}
}

// TestSameSeedSamePayloads: identical requests for one seed, different
// contexts and sampled orders for another.
func TestSameSeedSamePayloads(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"num-contexts": 6, "context-length": 20, "system-prompt-length": 5, "num-permutations": 5}
	run := func(seed int64) *sdktest.Transcript {
		return sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: workload.Common{Seed: seed}})
	}
	a, b, c := run(7), run(7), run(8)
	if d := cmp.Diff(a.Requests, b.Requests); d != "" {
		t.Errorf("same seed, different requests (-first +second):\n%s", d)
	}
	if cmp.Equal(a.Measured()[0].Messages, c.Measured()[0].Messages) {
		t.Error("seeds 7 and 8 send the same first request")
	}
}

// TestContentCrossesOnce checks each context and the system prompt are
// registered once, with the first request that uses them.
func TestContentCrossesOnce(t *testing.T) {
	t.Parallel()
	w, reg := newDirect(t, Options{NumContexts: 3, ContextLength: 5, SystemPromptLength: 4, NumPermutations: 6, NumInflightRequests: 6}, 42)
	ctx := context.Background()
	if got := reg.Drain(); len(got) != 0 {
		t.Fatalf("New registered %d contents", len(got))
	}
	if _, err := w.Step(ctx, workload.StepInput{Phase: workload.Warmup}); err != nil {
		t.Fatal(err)
	}
	if got := reg.Drain(); len(got) != 0 {
		t.Errorf("the warmup registered %d contents", len(got))
	}
	out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range reg.Drain() {
		ids = append(ids, c.ID)
	}
	if d := cmp.Diff([]string{"system", "ctx0", "ctx1", "ctx2"}, ids); d != "" {
		t.Errorf("registered (-want +got):\n%s", d)
	}
	if len(out.Requests) != 6 {
		t.Fatalf("%d requests in one step, want all 6", len(out.Requests))
	}
	last := out.Requests[5].Messages[1].Content // 2-1-0
	var refs []string
	for _, s := range last {
		refs = append(refs, s.Ref+s.Text)
	}
	if d := cmp.Diff([]string{"ctx2", "\n\n", "ctx1", "\n\n", "ctx0"}, refs); d != "" {
		t.Errorf("last request's user segments (-want +got):\n%s", d)
	}
}

// TestGoldenTranscript pins the whole request stream of a small run
// (3 contexts of 12 words, a 6-word system prompt, all 6 orderings, seed 42)
// through gRPC. Rewrite with `go test -run TestGoldenTranscript -update`.
func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.RunGRPC(t, Definition, sdktest.Options{
		Options: map[string]any{"num-contexts": 3, "context-length": 12, "system-prompt-length": 6, "num-inflight-requests": 2},
	})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}

// TestGoldenSampled pins a run whose orderings are sampled (5 contexts,
// 5! = 120 > 10 × 4), so the sorted sample shows in review.
func TestGoldenSampled(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"num-contexts": 5, "context-length": 3, "system-prompt-length": 0, "num-permutations": 4},
	})
	sdktest.Golden(t, filepath.Join("testdata", "sampled.golden.jsonl"), tr.JSONL(), *update)
}

func BenchmarkNewDefaults(b *testing.B) {
	for b.Loop() {
		reg := workload.NewRegistry()
		wl, err := Definition.New(Definition.Defaults, workload.Env{Common: workload.Common{Seed: 42}, Logger: zerolog.Nop(), Content: reg})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wl.Step(context.Background(), workload.StepInput{Phase: workload.Measure}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExpectedReuse: the first permutation expects nothing; a later one
// expects the system prompt and the contexts answered permutations
// carried, as blended reuse when a seen context is out of prefix
// position, as prefix reuse when only leading contexts match; a failed
// request teaches nothing; with requests in flight and nothing answered
// yet, a request declares nothing.
func TestExpectedReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type decl struct {
		Has    bool
		Tokens int
		Tier   string
	}
	w, _ := newDirect(t, Options{NumContexts: 3, ContextLength: 100, SystemPromptLength: 20, NumPermutations: 6,
		NumInflightRequests: 2}, 42)
	w.perms = [][]int{{0, 1, 2}, {0, 2, 1}, {0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}}
	step := func(inFlight int) []decl {
		out, err := w.Step(ctx, workload.StepInput{Phase: workload.Measure, InFlight: inFlight})
		if err != nil {
			t.Fatal(err)
		}
		var got []decl
		for _, r := range out.Requests {
			got = append(got, decl{r.HasExpectedCached, r.ExpectedCachedTokens, r.TargetTier})
		}
		return got
	}
	finish := func(id string, ok bool) {
		if err := w.OnFinished(ctx, []workload.Result{{ID: id, Phase: workload.Measure, Success: ok}}); err != nil {
			t.Fatal(err)
		}
	}
	// Two slots: perm 0 is cold; perm 1, sent beside it, declares nothing.
	if d := cmp.Diff([]decl{{true, 0, ""}, {false, 0, ""}}, step(0)); d != "" {
		t.Errorf("first step (-want +got):\n%s", d)
	}
	finish("perm1_req1", false) // failed: nothing learnt
	finish("perm0_req0", true)  // the system prompt and contexts 0, 1, 2 in that order
	// perm 2 repeats perm 0: all prefix; perm 3 reverses it: blended.
	if d := cmp.Diff([]decl{{true, 320, ""}, {true, 320, protocol.TierBlend}}, step(0)); d != "" {
		t.Errorf("after perm 0 (-want +got):\n%s", d)
	}
}
