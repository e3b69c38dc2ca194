package main

// End to end: kv-tier-pressure on the built-in engine, once with a disk
// tier below the CPU tier it sizes its pool against and once without.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// logWith reports whether stderr has a JSON log line of plugin at level
// whose message starts with prefix.
func logWith(stderr, level, plugin, prefix string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		msg, _ := m["message"].(string)
		if m["level"] == level && m["plugin"] == plugin && strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func TestKVTierPressureOnBuiltinEngine(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	// 1,024 tokens per GB: a 1 GB GPU tier (1,024 tokens) and a 4 GB CPU
	// tier (4,096), the capacity the run reports (--kv-cache-volume 4).
	// Overflow 2 with 240-token documents: a pool of ceil(2 x 4,096 / 240)
	// = 35 documents, 8,400 tokens, twice what the CPU tier holds.
	// A prompt is a 32-token system prompt and one document: 272 tokens,
	// 17 blocks of 16, of which 16 can hit (the last token is computed).
	run := func(t *testing.T, diskGB string) (result, string) {
		out := t.TempDir()
		r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "kv-tier-pressure",
			"--kv-cache-volume", "4", "--sim-tokens-per-gb", "1024", "--sim-gpu-gb", "1", "--sim-cpu-gb", "4", "--sim-disk-gb", diskGB,
			"--sim-time-scale", "0",
			"--ktp-docs-per-request", "1", "--ktp-context-length", "240", "--ktp-system-prompt-length", "32",
			"--ktp-num-requests", "200", "--ktp-access-skew", "0.5",
			"--no-interactive", "-q", "--output-dir", out)
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		return r, out
	}

	t.Run("disk tier", func(t *testing.T) {
		t.Parallel()
		r, out := run(t, "16")
		c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
		warm, measured := map[string]bool{}, 0
		for _, rec := range c.Records {
			if !rec.Success {
				t.Errorf("%s failed: %s", rec.RequestID, rec.Error)
				continue
			}
			if rec.InputTokens != 272 {
				t.Errorf("%s: %d prompt tokens, want 272", rec.RequestID, rec.InputTokens)
			}
			if rec.Phase.String() == "warmup" {
				warm[rec.Tags["docs"]] = true
				continue
			}
			measured++
			// CPU and disk together hold the whole pool: every document read
			// after the sweep hits all 16 blocks it can.
			if rec.CachedTokens != 256 {
				t.Errorf("%s (document %s): %d cached tokens, want 256", rec.RequestID, rec.Tags["docs"], rec.CachedTokens)
			}
		}
		if len(warm) != 35 || measured != 200 {
			t.Errorf("the sweep sent %d distinct documents (want the pool of 35), the measured phase %d requests (want 200)", len(warm), measured)
		}
		if !strings.Contains(r.stdout, "35 documents") {
			t.Errorf("the banner does not show the pool of 35 documents:\n%s", r.stdout)
		}
		if !logWith(r.stderr, "info", "kv-tier-pressure", "Tier check: passed: the cache served ") {
			t.Errorf("no passed tier check in the log:\n%s", r.stderr)
		}
	})

	t.Run("no disk tier", func(t *testing.T) {
		t.Parallel()
		r, out := run(t, "0")
		c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
		misses := 0
		for _, rec := range c.Records {
			if rec.Phase.String() == "measure" && rec.CachedTokens < 256 {
				misses++
			}
		}
		// Half the pool cannot be held: many reads miss the document.
		if misses < 40 {
			t.Errorf("only %d of 200 measured requests missed their document with no tier below the CPU", misses)
		}
		if !logWith(r.stderr, "warn", "kv-tier-pressure", "Tier check: not exercised: ") {
			t.Errorf("no failed tier check in the log:\n%s", r.stderr)
		}
	})
}
