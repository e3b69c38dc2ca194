package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

// TestLongDocPermutatorEndToEnd runs the real long-doc-permutator plugin
// against the fake engine: one dummy warmup, then every ordering of the
// three contexts exactly once, with the contexts the original draws for
// seed 42 (CPython's random.Random).
func TestLongDocPermutatorEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL,
		"--workload", "long-doc-permutator", "--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1",
		"--ldp-num-contexts", "3", "--ldp-num-permutations", "6", "--ldp-context-length", "200",
		"--ldp-system-prompt-length", "50", "--ldp-num-inflight-requests", "2",
		"--no-interactive", "-q", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 7 {
		t.Fatalf("engine saw %d requests, want 1 warmup + 6 measured", len(reqs))
	}
	type msg struct{ role, content string }
	messages := func(b map[string]any) []msg {
		var out []msg
		for _, m := range b["messages"].([]any) {
			mm := m.(map[string]any)
			out = append(out, msg{mm["role"].(string), mm["content"].(string)})
		}
		return out
	}
	warm := messages(reqs[0])
	if len(warm) != 2 || warm[0] != (msg{"system", "You are a helpful assistant."}) ||
		warm[1] != (msg{"user", strings.TrimSpace(strings.Repeat("warmup ", 500))}) || reqs[0]["max_tokens"].(float64) != 1 {
		t.Errorf("warmup request: max_tokens %v, messages start %q", reqs[0]["max_tokens"], trunc(promptOf(reqs[0])))
	}
	var system string
	contexts := map[string]int{} // context text -> index, by first appearance in the lexicographic first order
	orders := map[string]bool{}
	for i, b := range reqs[1:] {
		m := messages(b)
		if len(m) != 2 || m[0].role != "system" || m[1].role != "user" {
			t.Fatalf("measured request %d: roles %v", i, m)
		}
		if n := len(strings.Fields(m[0].content)); n != 50 {
			t.Errorf("measured request %d: system prompt has %d words, want 50", i, n)
		}
		if system == "" {
			system = m[0].content
		} else if m[0].content != system {
			t.Errorf("measured request %d: the system prompt changed", i)
		}
		parts := strings.Split(m[1].content, "\n\n")
		if len(parts) != 3 {
			t.Fatalf("measured request %d: %d contexts, want 3", i, len(parts))
		}
		var order []string
		for _, p := range parts {
			if n := len(strings.Fields(p)); n != 200 {
				t.Errorf("measured request %d: a context has %d words, want 200", i, n)
			}
			if _, ok := contexts[p]; !ok {
				contexts[p] = len(contexts)
			}
			order = append(order, fmt.Sprint(contexts[p]))
		}
		orders[strings.Join(order, "-")] = true
		if b["max_tokens"].(float64) != 128 {
			t.Errorf("measured request %d: max_tokens %v", i, b["max_tokens"])
		}
	}
	if len(contexts) != 3 || len(orders) != 6 {
		t.Errorf("%d distinct contexts in %d distinct orders, want 3 in 6: %v", len(contexts), len(orders), orders)
	}
	// Context 0 for seed 42, as CPython draws it (the plugin's testdata/reference.json).
	first := promptOf(reqs[1])
	if want := "bum5879 seyopub722 duzik7300 mixedaw7711 ruli2380 vevohal640"; !strings.Contains(first, "\n"+want) {
		t.Errorf("first measured request does not start with CPython's context 0 %q: %q", want, trunc(first))
	}

	// The journal tags every measured request with its permutation.
	var ids, tagged []string
	for _, rec := range readJournal(t, filepath.Join(out, "bench_journal.jsonl")).Records {
		if rec.Phase != record.Measure {
			continue
		}
		ids = append(ids, rec.RequestID)
		tagged = append(tagged, rec.Tags["perm"]+":"+rec.Tags["order"])
	}
	slices.Sort(ids)
	slices.Sort(tagged)
	if want := []string{"perm0_req0", "perm1_req1", "perm2_req2", "perm3_req3", "perm4_req4", "perm5_req5"}; !slices.Equal(ids, want) {
		t.Errorf("journal measured ids %v, want %v", ids, want)
	}
	if want := []string{"0:0-1-2", "1:0-2-1", "2:1-0-2", "3:1-2-0", "4:2-0-1", "5:2-1-0"}; !slices.Equal(tagged, want) {
		t.Errorf("journal tags perm:order %v, want %v", tagged, want)
	}
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	if len(rows) != 7 {
		t.Errorf("CSV has %d rows, want header + 6", len(rows))
	}
}
