package main

// End-to-end tests of the cache ledger's TTFT-gain and blend checks and of
// where its block size comes from (issue 13), through the real binaries
// against the built-in engine and a standalone `lmbench sim`.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ledgerExtras are the cache ledger's members these tests read.
type ledgerExtras struct {
	BlockSize       *int    `json:"block_size"`
	BlockSizeSource *string `json:"block_size_source"`
	TTFTGain        *struct {
		Hits   int     `json:"hit_requests"`
		Cold   int     `json:"cold_requests"`
		HitMS  float64 `json:"hit_ttft_ms"`
		ColdMS float64 `json:"cold_ttft_ms"`
		Ratio  float64 `json:"ratio"`
	} `json:"ttft_gain"`
	Blend *struct {
		Requests int      `json:"requests"`
		Expected int64    `json:"expected_tokens"`
		Measured *float64 `json:"measured_tokens"`
	} `json:"blend"`
	Verdicts []string `json:"verdicts"`
}

func readLedgerExtras(t *testing.T, dir string) ledgerExtras {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ledger *ledgerExtras `json:"cache_ledger"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Ledger == nil {
		t.Fatalf("no cache_ledger in %s", b)
	}
	return *doc.Ledger
}

func verdictWith(vs []string, sub string) string {
	for _, v := range vs {
		if strings.Contains(v, sub) {
			return v
		}
	}
	return ""
}

// TestHitsWithoutATTFTGain: long-doc-qa on a GPU tier that holds half its
// documents, so the measured phase mixes hits and cold requests of the
// same length. Where hits are free they are much faster and nothing is
// flagged; where the engine makes them as slow as a prefill
// (--sim-fault-slow-hits) the ledger says so, with the figures. The
// prefill cost (100 ms a document) dwarfs scheduling noise.
func TestHitsWithoutATTFTGain(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for name, slow := range map[string]bool{"free hits": false, "slow hits": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := []string{"run", "--engine-url", "builtin", "--workload", "long-doc-qa",
				"--kv-cache-volume", "1", "--sim-tokens-per-gb", "4096", "--sim-gpu-gb", "0.5", "--sim-cpu-gb", "0",
				"--ldqa-document-length", "400", "--ldqa-query-per-document", "4",
				"--sim-prefill-per-token", "250us", "--sim-decode-per-token", "1ms",
				"--no-interactive", "-q", "--json", "--output-dir", out}
			if slow {
				args = append(args, "--sim-fault-slow-hits")
			}
			r := lmbench(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLedgerExtras(t, out)
			g := l.TTFTGain
			if g == nil || g.Hits < 3 || g.Cold < 3 {
				t.Fatalf("ttft_gain = %+v, want hits and cold requests compared", g)
			}
			v := verdictWith(l.Verdicts, "hits without a TTFT gain over cold requests")
			if slow {
				if g.Ratio < 0.9 || v == "" {
					t.Errorf("slow hits: ratio %.2f (%.1f vs %.1f ms), verdict %q; want >= 0.9 and flagged", g.Ratio, g.HitMS, g.ColdMS, v)
				}
				if !strings.Contains(strings.ReplaceAll(r.stdout, "\n  ", " "), "WARNING: hits without a TTFT gain over cold requests") {
					t.Errorf("terminal lacks the warning:\n%s", r.stdout)
				}
				return
			}
			// Below the verdict's 0.9, not a tighter bound: on a loaded
			// machine free hits queue behind cold prefills (0.03-0.06 quiet,
			// 0.59 seen under a parallel test suite).
			if g.Ratio >= 0.9 || v != "" {
				t.Errorf("free hits: ratio %.2f (%.1f vs %.1f ms), verdict %q; want < 0.9 and none", g.Ratio, g.HitMS, g.ColdMS, v)
			}
		})
	}
}

// TestBlendInactiveIsFlagged: long-doc-permutator declares the blended
// reuse its reordered contexts allow; with the built-in engine's blending
// off nothing is blended and the ledger says blend is inactive, with it
// on the engine's blend counter rises and nothing is flagged.
func TestBlendInactiveIsFlagged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for name, blend := range map[string]bool{"blend off": false, "blend on": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := []string{"run", "--engine-url", "builtin", "--workload", "long-doc-permutator",
				"--kv-cache-volume", "1", "--ldp-num-contexts", "3", "--ldp-context-length", "200",
				"--ldp-system-prompt-length", "32", "--ldp-num-permutations", "4", "--sim-time-scale", "0",
				"--no-interactive", "-q", "--json", "--output-dir", out}
			if blend {
				args = append(args, "--sim-blend")
			}
			r := lmbench(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLedgerExtras(t, out)
			b := l.Blend
			// Permutations 1-3 reorder contexts permutation 0 carried.
			if b == nil || b.Requests != 3 || b.Expected < 3*200 || b.Measured == nil {
				t.Fatalf("blend = %+v, want 3 requests expecting at least 600 tokens, measured", b)
			}
			v := verdictWith(l.Verdicts, "non-prefix reuse expected but none measured (blend inactive)")
			if blend {
				if *b.Measured <= 0 || v != "" {
					t.Errorf("blend on: measured %v, verdict %q; want blended tokens and no verdict", *b.Measured, v)
				}
				return
			}
			if *b.Measured != 0 || v == "" {
				t.Errorf("blend off: measured %v, verdict %q; want 0 and flagged", *b.Measured, v)
			}
		})
	}
}

// TestLedgerBlockSizeSource: the ledger's block size is --block-size when
// given, else the block_size /status reports (the built-in engine's, or a
// standalone engine's through --lmcache-url), and the ledger says which.
func TestLedgerBlockSizeSource(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, simURL := startSim(t, "--block-size", "32", "--time-scale", "0")
	base := strings.TrimSuffix(simURL, "/v1")
	for _, tt := range []struct {
		name string
		args []string
		want int
		from string
	}{
		{"built-in engine's /status", []string{"--engine-url", "builtin", "--sim-block-size", "32"}, 32, "/status"},
		{"flag wins", []string{"--engine-url", "builtin", "--sim-block-size", "32", "--block-size", "64"}, 64, "--block-size"},
		{"lmcache-url /status", []string{"--engine-url", base, "--lmcache-url", base}, 32, "/status"},
		{"tokens per GB given, /status still read", []string{"--engine-url", base, "--lmcache-url", base,
			"--tokens-per-gb-kvcache", "8192"}, 32, "/status"},
		{"no /status", []string{"--engine-url", base, "--tokens-per-gb-kvcache", "8192"}, 16, "default"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := append([]string{"run", "--workload", "random-prefill", "--rp-num-requests", "4",
				"--rp-request-length", "100", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json",
				"--output-dir", out}, tt.args...)
			if tt.args[1] == "builtin" {
				args = append(args, "--sim-time-scale", "0")
			}
			r := lmbench(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			l := readLedgerExtras(t, out)
			if l.BlockSize == nil || *l.BlockSize != tt.want || l.BlockSizeSource == nil || *l.BlockSizeSource != tt.from {
				t.Errorf("block size %v from %v, want %d from %s", shown(l.BlockSize), shown(l.BlockSizeSource), tt.want, tt.from)
			}
		})
	}
}

func shown[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestHitsQueuedBehindColdRequests: a trace replayed 40 times faster than
// recorded backs the built-in engine up; its hits, which come after the
// cold requests that warmed their prefixes, wait behind a longer queue.
// The ledger must not blame a slow KV connector for that wait: it says
// the comparison cannot tell under saturation, naming both queues.
func TestHitsQueuedBehindColdRequests(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "trace-replay", "--tr-trace", traceFile,
		"--tr-speedup", "40", "--sim-cpu-gb", "512", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	l := readLedgerExtras(t, out)
	if v := verdictWith(l.Verdicts, "hits without a TTFT gain"); v != "" {
		t.Errorf("queued hits blamed on the cache: %q", v)
	}
	v := verdictWith(l.Verdicts, "hits and cold requests cannot be compared under saturation")
	if v == "" || !strings.Contains(v, "of the run's requests ahead of them") || !strings.Contains(v, "peak waiting requests") {
		t.Errorf("verdicts %q, want the saturation verdict with both queues and the engine's peak waiting", l.Verdicts)
	}
}
