package bench

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// lateSender answers at once but reports its submit late by lag after it
// was called: a client whose sends leave that late, without the wait.
type lateSender struct{ lag time.Duration }

func (s lateSender) Send(_ context.Context, req engine.Request) engine.Result {
	submit := time.Now().Add(s.lag)
	return engine.Result{ID: req.ID, Success: true, Submit: submit, FirstToken: submit.Add(time.Millisecond),
		LastToken: submit.Add(time.Millisecond), Finish: submit.Add(time.Millisecond), InputTokens: 10, OutputTokens: 1, Chunks: 1}
}

// Execute certifies every run: the terminal's "Client overhead" section
// and bench_summary.json's "overhead" carry the measured requests' lags
// and the probe's figures; a dispatch lag over the threshold (here
// reported by the sender, so deterministic) turns the verdict into the
// warning.
func TestExecuteCertifiesTheClient(t *testing.T) {
	t.Parallel()
	burst := []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
	for _, tt := range []struct {
		name      string
		lag       time.Duration
		saturated bool
	}{
		{"late sends", 40 * time.Millisecond, true},
		{"prompt sends", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, stdout := plan(t, batches([]protocol.Request{chat("w", nil)}, burst), lateSender{tt.lag})
			p.Report.ExportJSON = true
			res, err := Execute(context.Background(), p)
			if err != nil || res.Err != nil {
				t.Fatal(err, res.Err)
			}
			o := res.Overhead
			if o == nil || o.Requests != 3 || o.SpreadGroups != 1 || math.IsNaN(o.PhaseSeconds) {
				t.Fatalf("certificate %+v: want 3 measured requests (not the warmup one) due together", o)
			}
			if tt.saturated && (o.DispatchLagP50Ms < 40 || !o.Verdict.LagOver) {
				t.Errorf("dispatch lag p50 %v ms, verdict %+v: want >= 40 ms, over the threshold", o.DispatchLagP50Ms, o.Verdict)
			}
			// Without the reported lag, saturation could only come from
			// the machine (its CPU, its scheduler): not asserted.
			if tt.saturated && !o.Verdict.Saturated {
				t.Errorf("verdict %+v, want saturated", o.Verdict)
			}
			text := strings.Join(strings.Fields(stdout.String()), " ")
			if !strings.Contains(stdout.String(), " Client overhead ") || !strings.Contains(text, o.Text()) {
				t.Errorf("terminal lacks the section or the verdict %q:\n%s", o.Text(), stdout)
			}
			// The lag is at least the reported 40 ms, more on a busy
			// machine: the text is the certificate's, whatever it measured.
			if tt.saturated && (!strings.Contains(text, "WARNING: the client was saturated (") || !strings.Contains(text, "dispatch lag p99 ")) {
				t.Errorf("terminal lacks the warning:\n%s", stdout)
			}
			b, err := os.ReadFile(filepath.Join(p.Report.OutputDir, "bench_summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Overhead struct {
					DispatchLag struct{ Count int } `json:"dispatch_lag_ms"`
					Verdict     struct {
						Saturated bool
						Text      string
					}
				}
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Overhead.DispatchLag.Count != 3 || doc.Overhead.Verdict.Text != o.Text() || doc.Overhead.Verdict.Saturated != o.Verdict.Saturated {
				t.Errorf("bench_summary.json overhead %+v, want the certificate's", doc.Overhead)
			}
		})
	}
}
