package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lmbench/lmbench/core/record"
)

// With --record-outputs --record-logprobs 2 the built-in engine is asked
// for log-probabilities and returns them; each answer's first two tokens'
// (two alternatives each, the token itself first) are in the journal and
// the Parquet file. Without --record-logprobs none are kept, and asking
// for them without --record-outputs is refused before any traffic.
func TestRecordLogprobs(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	run := func(t *testing.T, extra ...string) (string, result) {
		out := t.TempDir()
		args := append([]string{"run", "--engine-url", "builtin", "--workload", "multi-round-chat", "--tokens-per-gb-kvcache", "600",
			"--kv-cache-volume", "1", "--mrc-shared-prompt-length", "40", "--mrc-chat-history-length", "60",
			"--mrc-output-length", "6", "--mrc-qps", "20", "--mrc-duration", "0.5", "--sim-time-scale", "0",
			"--exporter", "parquet", "--no-interactive", "-q", "--output-dir", out}, extra...)
		return out, lmbench(t, nil, args...)
	}
	out, r := run(t, "--record-outputs", "--record-logprobs", "2")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records
	measured := 0
	for _, rec := range recs {
		var lps []struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
			Top     []struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"top"`
		}
		if err := json.Unmarshal([]byte(rec.OutputLogprobs), &lps); err != nil {
			t.Fatalf("%s: output_logprobs %q: %v", rec.RequestID, rec.OutputLogprobs, err)
		}
		if rec.Phase == record.Measure {
			measured++
		}
		if rec.Phase == record.Warmup { // one token asked for: its own alone
			if len(lps) != 1 {
				t.Errorf("%s: %d tokens' log-probabilities, want the one answered", rec.RequestID, len(lps))
			}
			continue
		}
		if len(lps) != 2 || !strings.HasPrefix(rec.OutputText, lps[0].Token+lps[1].Token) {
			t.Errorf("%s: %d tokens' log-probabilities %v for the answer %q; want its first 2", rec.RequestID, len(lps), lps, rec.OutputText)
			continue
		}
		for _, lp := range lps {
			if len(lp.Top) != 2 || lp.Top[0].Token != lp.Token || lp.Top[0].Logprob != lp.Logprob || lp.Top[1].Logprob >= lp.Logprob || lp.Logprob >= 0 {
				t.Errorf("%s: token %+v: want 2 alternatives, itself first and most likely, log-probabilities < 0", rec.RequestID, lp)
			}
		}
	}
	if measured == 0 {
		t.Fatal("no measured request")
	}
	rows, err := parquet.ReadFile[struct {
		RequestID      string  `parquet:"request_id"`
		OutputLogprobs *string `parquet:"output_logprobs,optional"`
	}](filepath.Join(out, "bench_results.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.OutputLogprobs == nil || !strings.HasPrefix(*row.OutputLogprobs, `[{"token":`) {
			t.Errorf("Parquet %s: output_logprobs %v", row.RequestID, row.OutputLogprobs)
		}
	}

	plain, r := run(t, "--record-outputs")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(plain, record.JournalName)); strings.Contains(string(b), "output_logprobs") {
		t.Error("the journal keeps log-probabilities without --record-logprobs")
	}
	_, r = run(t, "--record-logprobs", "2")
	if r.code == exitOK || !strings.Contains(r.stderr, "--record-logprobs 2: keeps the log-probabilities of recorded answers; add --record-outputs") {
		t.Errorf("without --record-outputs: exit %d\n%s", r.code, r.stderr)
	}
}
