package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// psfGolden reads the prefix-suffix-tuner's golden transcript: the prompts
// its in-process tests pin for this same configuration.
func psfGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "plugins", "workload-psftuner", "testdata", "transcript.golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s struct {
			ID       string `json:"id"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out[s.ID] = s.Messages[0].Content
	}
	return out
}

// TestPrefixSuffixTunerEndToEnd runs the real binaries against an
// OpenAI-compatible server that records what it receives and how many
// requests it serves at once.
func TestPrefixSuffixTunerEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, withDelay(5*time.Millisecond))
	var inflight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
		eng.serve(w, r)
	}))
	t.Cleanup(srv.Close)
	out := t.TempDir()
	// 1 GB × 1.05 × 180 tokens/GB / 60-token prefixes = 3 prefixes: the
	// plugin's golden transcript configuration.
	r := lmbench(t, nil, "run", "--engine-url", srv.URL, "--workload", "prefix-suffix-tuner",
		"--psf-context-length", "200", "--psf-prefix-ratio", "0.3", "--psf-thrash", "1",
		"--tokens-per-gb-kvcache", "180", "--seed", "42", "--no-interactive", "-q", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := eng.requests()
	if len(reqs) != 6 {
		t.Fatalf("engine saw %d requests, want 3 in pass 1 and 3 in pass 2", len(reqs))
	}
	if m := most.Load(); m != 1 {
		t.Errorf("the engine served %d requests at once, want strictly 1", m)
	}
	golden := psfGolden(t)
	ids := []string{"pass1_p0", "pass1_p1", "pass1_p2", "pass2_p0", "pass2_p1", "pass2_p2"}
	var suffix string
	prefixes := map[int]string{}
	breakers := map[string]bool{}
	for k, b := range reqs {
		msgs := b["messages"].([]any)
		if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
			t.Fatalf("request %d: want one user message, got %v", k, len(msgs))
		}
		c := msgs[0].(map[string]any)["content"].(string)
		if c != golden[ids[k]] {
			t.Errorf("request %d (%s) differs from the plugin's golden transcript: %s", k, ids[k], trunc(c))
		}
		if b["max_tokens"].(float64) != 1 || b["stream"] != true {
			t.Errorf("request %d: max_tokens %v, stream %v", k, b["max_tokens"], b["stream"])
		}
		i := k % 3
		br, sx := strings.Index(c, " BR_"), strings.Index(c, " SUFFIX ")
		if !strings.HasPrefix(c, fmt.Sprintf("PREFIX_%08x ", i)) || br < 0 || sx < br {
			t.Errorf("request %d is not PREFIX_%08x, breaker, suffix: %s", k, i, trunc(c))
			continue
		}
		prefix, breaker, sfx := c[:br], c[br+1:sx], c[sx+1:]
		if p, ok := prefixes[i]; ok && p != prefix {
			t.Errorf("prefix %d differs between the passes", i)
		}
		prefixes[i] = prefix
		if n := len(strings.Fields(prefix)); n != 57 {
			t.Errorf("prefix %d: %d words, want header + 56", i, n)
		}
		if breakers[breaker] || len(strings.Fields(breaker)) != 29 {
			t.Errorf("request %d: breaker repeated or not BR_<hex> + 28 words: %s", k, trunc(breaker))
		}
		breakers[breaker] = true
		if suffix == "" {
			suffix = sfx
		} else if sfx != suffix {
			t.Errorf("request %d: the suffix is not shared", k)
		}
	}
	if len(prefixes) != 3 || prefixes[0] == prefixes[1] || prefixes[1] == prefixes[2] {
		t.Errorf("want 3 distinct prefixes, got %d", len(prefixes))
	}

	// The journal: both passes, in the same prefix order, each request sent
	// only after the previous one finished.
	recs := readJournal(t, filepath.Join(out, "bench_journal.jsonl")).Records
	sort.Slice(recs, func(a, b int) bool { return recs[a].Seq < recs[b].Seq })
	var got []string
	for k, rec := range recs {
		got = append(got, fmt.Sprintf("%s:%s:%s:%s", rec.RequestID, rec.Phase, rec.Tags["pass"], rec.Tags["prefix"]))
		if k > 0 && rec.Submit.Before(recs[k-1].Finish) {
			t.Errorf("%s was sent before %s finished", rec.RequestID, recs[k-1].RequestID)
		}
	}
	want := []string{"pass1_p0:warmup:1:0", "pass1_p1:warmup:1:1", "pass1_p2:warmup:1:2",
		"pass2_p0:measure:2:0", "pass2_p1:measure:2:1", "pass2_p2:measure:2:2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("journal:\n got %v\nwant %v", got, want)
	}
	if rows := readCSV(t, filepath.Join(out, "bench_results.csv")); len(rows) != 4 || rows[1][0] != "pass2_p0" {
		t.Errorf("CSV: %d rows, want header + the 3 measured", len(rows))
	}
	for _, s := range []string{" Workload: prefix-suffix-tuner", "Prefix tokens:", "60 (ratio=0.3)", "Suffix tokens:", "108 (shared, deterministic)",
		"1.00 GB (overflow x1.05 = 1.05 GB)", "Prefix pool size:", "3 requests (pass 2 of 2)"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("banner lacks %q:\n%s", s, r.stdout)
		}
	}
	if !hasLog(r.stderr, "info", "prefix-suffix-tuner", "Pass 1 (warmup): 3 requests") ||
		!hasLog(r.stderr, "info", "prefix-suffix-tuner", "Pass 1 complete: 3 prefixes populated") {
		t.Errorf("plugin log lines missing:\n%s", r.stderr)
	}
}

func TestPrefixSuffixTunerHelpAndErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	r := lmbench(t, nil, "run", "--workload", "prefix-suffix-tuner", "--help")
	if r.code != 0 {
		t.Fatalf("--help: exit %d\n%s", r.code, r.stderr)
	}
	help := strings.Join(strings.Fields(r.stdout), " ")
	for _, s := range []string{"--psf-context-length", "--psf-prefix-ratio", "--psf-thrash", "GPU tier", "CPU tier",
		"served from disk", "sized by prefix tokens", "1.05", "--kv-cache-volume is not used"} {
		if !strings.Contains(help, s) {
			t.Errorf("help lacks %q:\n%s", s, r.stdout)
		}
	}
	eng := newFakeEngine(t)
	base := []string{"run", "--engine-url", eng.srv.URL, "--workload", "prefix-suffix-tuner", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--output-dir", t.TempDir()}
	for flags, want := range map[string]string{
		"--psf-prefix-ratio 1":                            "--psf-prefix-ratio: prefix_ratio must be in (0.0, 1.0), got 1.0",
		"--psf-thrash 0":                                  "--psf-thrash: thrash (GB) must be positive, got 0.0",
		"--psf-context-length 0":                          "--psf-context-length: context_length must be positive, got 0",
		"--psf-context-length 200 --psf-prefix-ratio .95": "--psf-prefix-ratio: suffix_tokens=-22 is below minimum 100; reduce prefix_ratio or increase context_length (context_length 200 - prefix_tokens 190 (200 x prefix_ratio 0.95) - 32 breaker tokens)",
	} {
		r := lmbench(t, nil, append(base, strings.Fields(flags)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d (want 2), stderr lacks %q:\n%s", flags, r.code, want, r.stderr)
		}
	}
	if n := len(eng.requests()); n != 0 {
		t.Errorf("invalid options sent %d requests", n)
	}
}
