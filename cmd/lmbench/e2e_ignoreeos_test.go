package main

// End to end: exact output lengths. trace-replay asks for them (ignore_eos)
// by default, so a built-in engine that ends answers early at its
// end-of-sequence token still gives every request its trace's output
// length; --ignore-eos asks it for any workload.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestTraceReplayExactOutputLengths(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	outputs := []int{1, 2, 6, 9}
	var text string
	for i, n := range outputs {
		text += `{"timestamp": ` + strconv.Itoa(i*10) + `, "input_length": 8, "output_length": ` + strconv.Itoa(n) + "}\n"
	}
	if err := os.WriteFile(trace, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const eosAfter = 2
	for _, exact := range []bool{true, false} {
		t.Run("ignore-eos="+strconv.FormatBool(exact), func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "trace-replay",
				"--tr-trace", trace, "--tr-block-size", "4", "--tr-ignore-eos="+strconv.FormatBool(exact),
				"--sim-time-scale", "0", "--sim-eos-after", strconv.Itoa(eosAfter),
				"--no-interactive", "-q", "--json", "--output-dir", out)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			c := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
			if len(c.Records) != len(outputs) {
				t.Fatalf("journal has %d records, want %d", len(c.Records), len(outputs))
			}
			for _, rec := range c.Records {
				line, _ := strconv.Atoi(rec.Tags["line"])
				want, finish := outputs[line-1], "length"
				if !exact && want > eosAfter {
					want, finish = eosAfter, "stop"
				}
				if rec.OutputTokens != int64(want) || rec.FinishReason != finish {
					t.Errorf("%s: %d output tokens, finish %q; want %d, %q", rec.RequestID, rec.OutputTokens, rec.FinishReason, want, finish)
				}
			}
		})
	}
}

// --ignore-eos (or the original's config key ignore_eos: true) puts
// ignore_eos and min_tokens = max_tokens in every body, for a workload that
// does not ask for it; without it neither is sent.
func TestIgnoreEOSFlagReachesTheEngine(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	cfg := filepath.Join(t.TempDir(), "original.json")
	if err := os.WriteFile(cfg, []byte(`{"ignore_eos": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, extra := range map[string][]string{"flag": {"--ignore-eos"}, "config key": {"--config", cfg}, "off": nil} {
		on := extra != nil
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eng := newFakeEngine(t)
			out := t.TempDir()
			args := append([]string{"run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
				"--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1", "--ldqa-document-length", "2000",
				"--no-interactive", "-q", "--output-dir", out}, extra...)
			if r := lmbench(t, nil, args...); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			reqs := eng.requests()
			if len(reqs) == 0 {
				t.Fatal("the engine saw no request")
			}
			for i, b := range reqs {
				ignore, hasIgnore := b["ignore_eos"]
				minTokens, hasMin := b["min_tokens"]
				if on && (ignore != true || !hasMin || minTokens != b["max_tokens"]) || !on && (hasIgnore || hasMin) {
					t.Errorf("request %d: ignore_eos %v, min_tokens %v, max_tokens %v", i, ignore, minTokens, b["max_tokens"])
				}
			}
			// The journal's configuration records it, so a replay asks the same.
			var cfg map[string]any
			if err := json.Unmarshal(readJournal(t, filepath.Join(out, "bench_journal.jsonl")).Run.Config, &cfg); err != nil {
				t.Fatal(err)
			}
			if got, has := cfg["ignore_eos"]; on && got != true || !on && has {
				t.Errorf("journal config ignore_eos = %v (present %v), want %v", got, has, on)
			}
		})
	}
}
