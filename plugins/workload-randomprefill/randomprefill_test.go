package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func small() map[string]any { return map[string]any{"request-length": 100, "num-requests": 5} }

func TestSchema(t *testing.T) {
	t.Parallel()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Label, Help string
		Default           any
		Min               float64
	}
	var got []row
	for _, s := range specs {
		got = append(got, row{s.Name, s.Label, s.Help, s.Default, minOf(s.Min)})
	}
	want := []row{
		{"request-length", "Request length (tokens)", "Token length per request.", int64(10000), 1},
		{"num-requests", "Number of requests", "Number of requests to send.", int64(50), 1},
		{"rate", "Request rate (req/s)", "Requests per second, the mean rate of --rp-arrival; 0 = infinite: every request at once, as the original.", float64(0), 0},
		{"arrival", "Arrival process", "How requests arrive at --rp-rate: constant (request k due at k/rate), poisson (exponential gaps) or gamma (bursty gaps of shape --rp-burstiness, as vLLM's --burstiness); drawn from --seed and, as vLLM does, rescaled so that the last request is due at (n-1)/rate.", "constant", 0},
		{"burstiness", "Burstiness (gamma shape)", "Shape of --rp-arrival gamma, as vLLM's --burstiness: the gaps' coefficient of variation is 1/sqrt(burstiness), so below 1 is burstier than Poisson, above 1 smoother, 1 is Poisson. Must be > 0, and 1 with the other arrivals.", float64(1), 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("option schema (-want +got):\n%s", d)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts map[string]any
		want map[string]any
	}{
		{"defaults", nil, map[string]any{"request-length": int64(10000), "num-requests": int64(50), "rate": 0.0, "arrival": "constant", "burstiness": 1.0}},
		{"custom", small(), map[string]any{"request-length": int64(100), "num-requests": int64(5), "rate": 0.0, "arrival": "constant", "burstiness": 1.0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := sdktest.Run(t, Definition, sdktest.Options{Options: tc.opts})
			if d := cmp.Diff(tc.want, tr.Resolved); d != "" {
				t.Errorf("resolved (-want +got):\n%s", d)
			}
			if n := int(tc.want["num-requests"].(int64)); tr.Planned != n || len(tr.Measured()) != n {
				t.Errorf("planned %d, sent %d; want %d", tr.Planned, len(tr.Measured()), n)
			}
		})
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{}, []sdktest.FieldErrorCase{
		{Name: "length 0", Options: map[string]any{"request-length": 0}, Want: []option.FieldError{{Option: "request-length", Message: "request_length must be positive, got 0"}}},
		{Name: "length -1", Options: map[string]any{"request-length": -1}, Want: []option.FieldError{{Option: "request-length", Message: "request_length must be positive, got -1"}}},
		{Name: "count 0", Options: map[string]any{"num-requests": 0}, Want: []option.FieldError{{Option: "num-requests", Message: "num_requests must be >= 1, got 0"}}},
		{Name: "both", Options: map[string]any{"request-length": 0, "num-requests": -3}, Want: []option.FieldError{
			{Option: "request-length", Message: "request_length must be positive, got 0"},
			{Option: "num-requests", Message: "num_requests must be >= 1, got -3"},
		}},
	})
}

func TestBanner(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small()})
	want := []workload.Field{
		{Label: "Requests", Value: "5"},
		{Label: "Request length", Value: "100 tokens"},
		{Label: "Max output", Value: "1 token"},
	}
	if d := cmp.Diff(want, tr.Banner); d != "" {
		t.Errorf("banner (-want +got):\n%s", d)
	}
}

func TestPrompts(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small()})
	sent := tr.Measured()
	if len(sent) != 5 {
		t.Fatalf("%d prompts, want 5", len(sent))
	}
	for i, s := range sent {
		c := sdktest.UserText(t, s)
		if prefix := fmt.Sprintf("Request %d: ", i); !strings.HasPrefix(c, prefix) {
			t.Errorf("prompt %d starts %.20q, want prefix %q", i, c, prefix)
		}
		words := strings.Fields(c)
		if n := len(words) - 2; n != 90 || slices.ContainsFunc(words[2:], func(w string) bool { return w != "hi" }) {
			t.Errorf("prompt %d: want 90 \"hi\" after the header, got %d words", i, n)
		}
		if strings.Contains(c, "  ") || strings.HasSuffix(c, " ") {
			t.Errorf("prompt %d is not single-space joined", i)
		}
	}
	if got := promptText(7, fillerBody(3-10)); got != "Request 7: hi" {
		t.Errorf("a prompt shorter than its header is %q, want one \"hi\"", got)
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: small(), Logger: &log})
	if len(tr.Warmup()) != 0 || tr.WarmupElapsed != 0 {
		t.Errorf("warmup sent %d requests in %v, want none", len(tr.Warmup()), tr.WarmupElapsed)
	}
	want := []string{"prefill_0", "prefill_1", "prefill_2", "prefill_3", "prefill_4"}
	if d := cmp.Diff(want, sdktest.IDs(tr.Measured())); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	for i, s := range tr.Measured() {
		if s.Offset != 0 || s.MaxTokens != 1 {
			t.Errorf("%s: sent at %v with max_tokens %d; want all at 0 with max_tokens 1", s.ID, s.Offset, s.MaxTokens)
		}
		if d := cmp.Diff(map[string]string{"index": fmt.Sprint(i)}, s.Tags); d != "" {
			t.Errorf("%s: tags (-want +got):\n%s", s.ID, d)
		}
	}
	// One warmup Step (done at once) and one measure Step that sends all and is done.
	if tr.Steps != 2 {
		t.Errorf("%d Steps, want 2 (no redispatch after the first measure step)", tr.Steps)
	}
	var msgs []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, fmt.Sprint(m[zerolog.LevelFieldName], ": ", m[zerolog.MessageFieldName]))
	}
	if d := cmp.Diff([]string{"info: Dispatched all 5 requests"}, msgs); d != "" {
		t.Errorf("logs (-want +got):\n%s", d)
	}
}

func TestFirstStepSendsAllThenDone(t *testing.T) {
	t.Parallel()
	wl, err := Definition.New(Options{RequestLength: 100, NumRequests: 5}, workload.Env{Logger: zerolog.Nop(), Content: workload.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := wl.Step(ctx, workload.StepInput{Phase: workload.Warmup})
	if err != nil || !reflect.DeepEqual(out, workload.Done()) { // StepOutput keeps its next action unexported
		t.Errorf("warmup step = %+v, %v; want Done with no requests", out, err)
	}
	out, err = wl.Step(ctx, workload.StepInput{Phase: workload.Measure})
	if err != nil || len(out.Requests) != 5 {
		t.Fatalf("first measure step sent %d requests (%v), want 5", len(out.Requests), err)
	}
	for _, r := range out.Requests {
		if r.MaxTokens != 1 {
			t.Errorf("%s: max_tokens %d, want 1", r.ID, r.MaxTokens)
		}
	}
	if out.Requests = nil; !reflect.DeepEqual(out, workload.Done()) {
		t.Errorf("first measure step does not end the phase: %+v", out)
	}
}

// TestHugeRunSplitsSteps: prompts that would not fit in one gRPC message go
// out over several Steps at the same instant.
func TestHugeRunSplitsSteps(t *testing.T) {
	t.Parallel()
	quick := func(s sdktest.Sent) sdktest.Reply {
		return sdktest.Reply{Success: true, TTFT: time.Millisecond, Latency: time.Millisecond, OutputTokens: 1}
	}
	// 60 prompts of ~300 kB: ~18 MB in all.
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{"request-length": 100000, "num-requests": 60}, Engine: quick})
	sent := tr.Measured()
	if len(sent) != 60 {
		t.Fatalf("%d sent, want 60", len(sent))
	}
	for i, s := range sent {
		if s.ID != fmt.Sprint("prefill_", i) || s.Offset != 0 {
			t.Errorf("request %d: %s at %v, want prefill_%d at 0", i, s.ID, s.Offset, i)
		}
	}
	if tr.Steps < 4 {
		t.Errorf("%d Steps: the prompts were not split", tr.Steps)
	}
}

// TestGoldenTranscript pins the request stream of a tiny run through gRPC.
// Rewrite with `go test -run TestGoldenTranscript -update`.
func TestGoldenTranscript(t *testing.T) {
	t.Parallel()
	tr := sdktest.RunGRPC(t, Definition, sdktest.Options{Options: map[string]any{"request-length": 13, "num-requests": 3}})
	sdktest.Golden(t, filepath.Join("testdata", "transcript.golden.jsonl"), tr.JSONL(), *update)
}

func minOf(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Plans too large to hold are option errors naming the flag, not an
// out-of-memory crash minutes later.
func TestPlansThatCannotFit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"num-requests": 100000000, "request-length": 10}, "num-requests: num_requests must be at most 1048576, got 100000000"},
		{map[string]any{"request-length": 1000000000}, "request-length: request_length must be at most 16777216 tokens, got 1000000000"},
		{map[string]any{"num-requests": 200000, "request-length": 10000}, "num-requests: num_requests x request_length = 200000 x 10000 tokens is about 5.6 GiB of prompt text, all sent at once; at most 1 GiB fits: lower --rp-num-requests or --rp-request-length"},
	} {
		_, err := sdktest.RunE(Definition, sdktest.Options{Options: tc.opts})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// With --rp-rate the prompts leave on the seed's schedule, normalised so
// the last is due at (n-1)/rate, each stamped with its due time; the
// request stream is otherwise the burst's.
func TestPacedRate(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{arrival.Constant, arrival.Poisson, arrival.Gamma} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			burst := 1.0
			if kind == arrival.Gamma {
				burst = 0.5
			}
			opts := map[string]any{"request-length": 20, "num-requests": 40, "rate": 10.0, "arrival": kind, "burstiness": burst}
			tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: workload.Common{Seed: 7}})
			want, err := arrival.New(kind, 10, burst, 7)
			if err != nil {
				t.Fatal(err)
			}
			want.Normalize(39)
			m := tr.Measured()
			if len(m) != 40 {
				t.Fatalf("sent %d requests, want 40", len(m))
			}
			for k, s := range m {
				if s.ID != "prefill_"+strconv.Itoa(k) {
					t.Fatalf("request %d is %s, want prefill_%d", k, s.ID, k)
				}
				if due := want.Due(k); s.Scheduled != due || s.Offset != due {
					t.Fatalf("%s: sent at %v, scheduled %v; want both %v", s.ID, s.Offset, s.Scheduled, due)
				}
			}
			if last := m[39].Offset; last != 3900*time.Millisecond {
				t.Errorf("last request due at %v, want 3.9s ((n-1)/rate)", last)
			}
		})
	}
}

// On a host with look-ahead the prompts are handed over up to a second
// ahead, a few hundred a Step, and the host sends each when due; an older
// host gets each only once it is due, one Step per due time. Both send
// every prompt exactly at its due time.
func TestPacedLookAhead(t *testing.T) {
	t.Parallel()
	const n = 1000
	for _, tc := range []struct {
		name     string
		caps     []string // nil: every capability
		maxSteps int
		minSteps int
	}{
		{name: "look-ahead", maxSteps: 2*n/workload.AheadBatch + int(time.Second/workload.AheadRefill) + 2},
		{name: "protocol minor 0", caps: []string{}, minSteps: n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := map[string]any{"request-length": 20, "num-requests": n, "rate": 1000.0}
			tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, HostCapabilities: tc.caps})
			m := tr.Measured()
			if len(m) != n {
				t.Fatalf("sent %d requests, want %d", len(m), n)
			}
			for k, s := range m {
				if due := time.Duration(k) * time.Millisecond; s.Scheduled != due || s.Offset != due {
					t.Fatalf("%s: sent at %v, scheduled %v; want both %v", s.ID, s.Offset, s.Scheduled, due)
				}
			}
			if tc.maxSteps > 0 && tr.Steps > tc.maxSteps {
				t.Errorf("%d Steps, want at most %d", tr.Steps, tc.maxSteps)
			}
			if tr.Steps < tc.minSteps {
				t.Errorf("%d Steps, want at least %d", tr.Steps, tc.minSteps)
			}
		})
	}
}

// An arrival process needs a rate; a rate needs a sensible burstiness.
func TestRateOptionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"arrival": "poisson"}, "arrival"},
		{map[string]any{"rate": -1.0}, "rate"},
		{map[string]any{"rate": 5.0, "arrival": "gamma", "burstiness": 0.0}, "burstiness"},
	} {
		_, err := sdktest.RunE(Definition, sdktest.Options{Options: tc.opts})
		var ce *sdktest.ConfigError
		if !errors.As(err, &ce) || len(ce.Fields()) == 0 || ce.Fields()[0].Option != tc.want {
			t.Errorf("%v: got %v, want an error naming %q", tc.opts, err, tc.want)
		}
	}
}

// The rate is declared to the host, for the summary's achieved-vs-
// requested figures; an older host is told none.
func TestRequestedRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rate float64
		caps []string
		want float64
	}{
		{name: "paced", rate: 250, want: 250},
		{name: "all at once", rate: 0, want: 0},
		{name: "older host", rate: 250, caps: []string{}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := map[string]any{"request-length": 20, "num-requests": 3, "rate": tc.rate}
			tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, HostCapabilities: tc.caps})
			if tr.RequestedRate != tc.want {
				t.Errorf("RequestedRate = %v, want %v", tr.RequestedRate, tc.want)
			}
		})
	}
}
