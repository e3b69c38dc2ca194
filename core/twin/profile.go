package twin

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// Schema names a profile's format.
const Schema = "lmbench.twin-profile/1"

// Profile is the built-in engine's parameters fitted to finished runs
// (lmbench fit -o profile.json): each with an uncertainty, those the runs
// could not identify with why, the residuals of the model on the runs,
// and the settings that serve it (lmbench sim --profile, --sim-profile).
type Profile struct {
	Schema   string   `json:"schema"`
	Runs     []string `json:"runs"`
	Requests int      `json:"requests"`
	// Notes say how the fit read the runs (where cached tokens came from).
	Notes     []string  `json:"notes"`
	Params    []Param   `json:"parameters"`
	Residuals Residuals `json:"residuals"`
	// Settings are the built-in engine's settings by name (as lmbench sim's
	// flags name them, values as they take them): the identified
	// parameters. The others keep the engine's defaults.
	Settings map[string]string `json:"settings"`
}

// Param is one fitted parameter: a built-in engine setting's value
// (seconds, or requests for max-num-seqs) and its standard error, or why
// the runs could not identify it.
type Param struct {
	Name        string  `json:"name"`
	Value       float64 `json:"value"`
	Uncertainty float64 `json:"uncertainty"`
	Unit        string  `json:"unit"`
	Identified  bool    `json:"identified"`
	Why         string  `json:"why,omitempty"`
	// Samples are the requests (or chunk gaps) it was fitted on.
	Samples int `json:"samples"`
}

// Residuals are the fitted model's errors on the runs it was fitted to:
// each request replayed through the model, its predicted TTFT, TPOT and
// E2E against the measured ones, as relative errors |predicted −
// measured| / measured.
type Residuals struct {
	TTFT Error `json:"ttft"`
	TPOT Error `json:"tpot"`
	E2E  Error `json:"e2e"`
}

// Error is the median and 90th percentile of the relative errors of N
// requests (NaN, written null, when there were none).
type Error struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
}

// MarshalJSON writes an undefined figure as null.
func (e Error) MarshalJSON() ([]byte, error) {
	num := func(f float64) any {
		if math.IsNaN(f) {
			return nil
		}
		return f
	}
	return json.Marshal(map[string]any{"n": e.N, "median": num(e.Median), "p90": num(e.P90)})
}

// UnmarshalJSON reads null as NaN.
func (e *Error) UnmarshalJSON(b []byte) error {
	var v struct {
		N           int
		Median, P90 *float64
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.N, e.Median, e.P90 = v.N, math.NaN(), math.NaN()
	if v.Median != nil {
		e.Median = *v.Median
	}
	if v.P90 != nil {
		e.P90 = *v.P90
	}
	return nil
}

// Param returns the parameter named name (false when the profile has
// none).
func (p *Profile) Param(name string) (Param, bool) {
	for _, x := range p.Params {
		if x.Name == name {
			return x, true
		}
	}
	return Param{}, false
}

// Model is the profile's parameters as the model replays them: those the
// runs did not identify at the built-in engine's defaults (core/sim
// DefaultConfig: 50µs, 5µs, 20µs, 10ms, none for the rest).
func (p *Profile) Model() Params {
	m := Params{PrefillPerToken: 50e-6, CPULoadPerToken: 5e-6, DiskLoad: 20e-6, DecodePerToken: 10e-3}
	for _, x := range p.Params {
		if !x.Identified {
			continue
		}
		switch x.Name {
		case "prefill-per-token":
			m.PrefillPerToken = x.Value
		case "prefill-growth":
			m.PrefillGrowth = x.Value
		case "prefill-overhead":
			m.PrefillOverhead = x.Value
		case "cpu-load-per-token":
			m.CPULoadPerToken = x.Value
		case "disk-load-per-token":
			m.DiskLoad = x.Value
		case "decode-per-token":
			m.DecodePerToken = x.Value
		case "decode-per-seq":
			m.DecodePerSeq = x.Value
		case "max-num-seqs":
			m.MaxNumSeqs = int(math.Round(x.Value))
		}
	}
	return m
}

// settings are the identified parameters as the engine's settings; a
// negative fitted cost (noise around 0) is served as 0.
func (p *Profile) settings() map[string]string {
	out := map[string]string{}
	for _, x := range p.Params {
		if !x.Identified || x.Name == ClientLatency {
			continue
		}
		if x.Unit == "s" {
			d := time.Duration(math.Round(max(x.Value, 0) * 1e9))
			out[x.Name] = d.String()
		} else {
			out[x.Name] = strconv.Itoa(int(math.Round(x.Value)))
		}
	}
	return out
}

// residuals replays each run through m and sets the predictions beside
// the measurements.
func residuals(m Params, runs []Run) Residuals {
	var ttft, tpot, e2e []float64
	rel := func(p, q float64) float64 { return math.Abs(p-q) / q }
	for _, r := range runs {
		jobs := make([]Job, len(r.Requests))
		for i, q := range r.Requests {
			jobs[i] = q.Job
		}
		out := Replay(m, jobs)
		for i, q := range r.Requests {
			o := out[i]
			if q.TTFT > 0 {
				ttft = append(ttft, rel(o.FirstToken-q.Arrive, q.TTFT))
			}
			if q.E2E > 0 {
				e2e = append(e2e, rel(o.Finish-q.Arrive, q.E2E))
			}
			if q.HasTPOT && q.TPOT > 0 && q.OutputTokens > 1 {
				tpot = append(tpot, rel((o.Finish-o.FirstToken)/float64(q.OutputTokens-1), q.TPOT))
			}
		}
	}
	errOf := func(v []float64) Error { return Error{N: len(v), Median: quantile(v, 0.5), P90: quantile(v, 0.9)} }
	return Residuals{TTFT: errOf(ttft), TPOT: errOf(tpot), E2E: errOf(e2e)}
}

// WriteFile writes p as indented JSON.
func (p *Profile) WriteFile(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return record.WriteFileAtomic(path, append(b, '\n'))
}

// ReadProfile reads a profile lmbench fit wrote. An error names the file.
func ReadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: not a twin profile: %w", path, err)
	}
	if p.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q (a profile lmbench fit wrote)", path, p.Schema, Schema)
	}
	return &p, nil
}

// WriteText prints p as lmbench fit does: each parameter ± its
// uncertainty, those not identified and why, the residuals.
func (p *Profile) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fitted to %d requests in %d run(s)\n", p.Requests, len(p.Runs))
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	b.WriteString("\nparameters:\n")
	var missing []Param
	for _, x := range p.Params {
		if !x.Identified {
			missing = append(missing, x)
			continue
		}
		fmt.Fprintf(&b, "  %-20s %s ± %s  (%d samples)\n", x.Name, show(x.Value, x.Unit), show(x.Uncertainty, x.Unit), x.Samples)
	}
	if len(missing) > 0 {
		b.WriteString("\nnot identified (the twin keeps the built-in engine's default):\n")
		for _, x := range missing {
			fmt.Fprintf(&b, "  %-20s %s\n", x.Name, x.Why)
		}
	}
	b.WriteString("\nresiduals (|predicted - measured| / measured, per request):\n")
	for _, e := range []struct {
		name string
		e    Error
	}{{"TTFT", p.Residuals.TTFT}, {"TPOT", p.Residuals.TPOT}, {"E2E", p.Residuals.E2E}} {
		fmt.Fprintf(&b, "  %-5s median %s  p90 %s  (%d requests)\n", e.name, pct(e.e.Median), pct(e.e.P90), e.e.N)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// show prints a value in its unit: a duration in seconds, or a count.
func show(v float64, unit string) string {
	if unit != "s" {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0s"
	case a < 1e-3:
		return strconv.FormatFloat(v*1e6, 'f', 2, 64) + "µs"
	case a < 1:
		return strconv.FormatFloat(v*1e3, 'f', 3, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + "s"
}

func pct(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}
