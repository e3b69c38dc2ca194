package main

// End to end: the prompt length a workload states and whether it set the
// schedule reach both result files, and agree with the journal request by
// request.

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestStatedPromptTokensInCSVAndParquet(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	// The built-in engine has a /tokenize, so --tokenizer auto counts
	// exactly and the workloads state every prompt's length.
	common := []string{"run", "--engine-url", "builtin", "--tokenizer", "auto", "--sim-time-scale", "0",
		"--exporter", "csv", "--exporter", "parquet", "--csv-include-warmup", "--no-interactive", "-q"}
	tests := []struct {
		name     string
		args     []string
		explicit bool // the workload sets every measured request's schedule
	}{
		{"long-doc-qa, a closed loop", []string{"--workload", "long-doc-qa", "--kv-cache-volume", "0.5",
			"--sim-tokens-per-gb", "4096", "--ldqa-document-length", "300", "--ldqa-query-per-document", "2"}, false},
		{"random-prefill, an open loop", []string{"--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
			"--rp-num-requests", "12", "--rp-request-length", "80", "--rp-rate", "200"}, true},
		// Measured rounds carry the engine's earlier answers: each is
		// counted, whole, when its session's last answer arrives.
		{"multi-round-chat, rounds carrying answers", []string{"--workload", "multi-round-chat", "--tokens-per-gb-kvcache", "600",
			"--kv-cache-volume", "1", "--mrc-shared-prompt-length", "40", "--mrc-chat-history-length", "60", "--mrc-user-input-length", "8",
			"--mrc-output-length", "6", "--mrc-qps", "20", "--mrc-duration", "1", "--mrc-max-rounds", "3"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			r := lmbench(t, nil, append(append(slices.Clone(common), tt.args...), "--output-dir", out)...)
			if r.code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			journal := filepath.Join(out, "bench_journal.jsonl")
			for _, rec := range readJournal(t, journal).Records {
				if !rec.Success || rec.StatedPromptTokens <= 0 {
					t.Errorf("%s: success %v, stated %d tokens; want a success with a stated length", rec.RequestID, rec.Success, rec.StatedPromptTokens)
				}
				if rec.ExplicitSchedule != tt.explicit && rec.Phase.String() == "measure" {
					t.Errorf("%s: explicit schedule %v, want %v", rec.RequestID, rec.ExplicitSchedule, tt.explicit)
				}
			}
			checkStatedAgree(t, out, journal)
			if strings.HasPrefix(tt.name, "multi-round-chat") {
				recs := readJournal(t, journal).Records
				checkStatedIsEngines(t, recs, nil) // the built-in engine's usage counts the chat as its /tokenize does
				rounds := 0
				for _, r := range recs {
					if r.Tags["round"] != "" && r.Tags["round"] != "0" {
						rounds++
					}
				}
				if rounds == 0 {
					t.Error("no measured round carried an earlier answer: the test shows nothing")
				}
			}
		})
	}
	// Version 2 journals of earlier runs re-export with the columns:
	// one whose workload stated lengths, one from before the key existed.
	for _, name := range []string{"ldqa-nocache-metrics", "ldqa"} {
		t.Run("re-export "+name, func(t *testing.T) {
			t.Parallel()
			journal := filepath.Join("..", "..", "core", "htmlreport", "testdata", name, "bench_journal.jsonl")
			out := t.TempDir()
			r := lmbench(t, nil, "export", "--journal", journal, "--exporter", "csv", "--exporter", "parquet",
				"--csv-include-warmup", "--output-dir", out)
			if r.code != exitOK {
				t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
			}
			checkStatedAgree(t, out, journal)
		})
	}
}

// checkStatedAgree compares the journal's stated prompt tokens and
// explicit-schedule flag with those of the CSV and the Parquet file in
// out, request by request.
func checkStatedAgree(t *testing.T, out, journal string) {
	t.Helper()
	recs := readJournal(t, journal).Records
	rows := readCSV(t, filepath.Join(out, "bench_results.csv"))
	ids, stated, sched := column(t, rows, "request_id"), column(t, rows, "stated_prompt_tokens"), column(t, rows, "explicit_schedule")
	csvByID := map[string][2]string{}
	for i, id := range ids {
		csvByID[id] = [2]string{stated[i], sched[i]}
	}
	pq, _ := readParquet(t, filepath.Join(out, "bench_results.parquet"))
	pqByID := map[string]pqRow{}
	for _, g := range pq {
		pqByID[g.RequestID] = g
	}
	if len(recs) == 0 || len(csvByID) != len(recs) || len(pqByID) != len(recs) {
		t.Fatalf("%d journal records, %d CSV rows, %d Parquet rows: want the same requests, some", len(recs), len(csvByID), len(pqByID))
	}
	for _, rec := range recs {
		wantCSV := [2]string{"", map[bool]string{true: "True", false: "False"}[rec.ExplicitSchedule]}
		if rec.StatedPromptTokens > 0 {
			wantCSV[0] = strconv.FormatInt(rec.StatedPromptTokens, 10)
		}
		if got, ok := csvByID[rec.RequestID]; !ok || got != wantCSV {
			t.Errorf("%s: CSV stated_prompt_tokens, explicit_schedule %q, journal %q", rec.RequestID, got, wantCSV)
		}
		g, ok := pqByID[rec.RequestID]
		statedOK := g.StatedPromptTokens == nil && rec.StatedPromptTokens == 0 ||
			g.StatedPromptTokens != nil && *g.StatedPromptTokens == rec.StatedPromptTokens
		if !ok || !statedOK || g.ExplicitSchedule != rec.ExplicitSchedule {
			t.Errorf("%s: Parquet stated_prompt_tokens %v, explicit_schedule %v; journal %d, %v",
				rec.RequestID, g.StatedPromptTokens, g.ExplicitSchedule, rec.StatedPromptTokens, rec.ExplicitSchedule)
		}
	}
}
