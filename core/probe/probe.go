package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/enginemetrics"
)

// Setup is what lmbench probe asks: the engine (as typed, a bare port
// meaning this machine), its kind (--engine-kind: "" or auto asks it), its
// metrics (--metrics-url: "" is the engine's /metrics) and the API key.
type Setup struct {
	EngineURL, Kind, MetricsURL, APIKey string
}

// Report is what the engine reports and what lmbench can and cannot
// measure on it.
type Report = profile.Report

// Probed is a probe's report and the engine as it is shown (no
// credentials).
type Probed struct {
	Report Report
	Shown  string
}

// Write prints the report: plain words, or JSON.
func (p Probed) Write(w io.Writer, asJSON bool) error {
	if !asJSON {
		_, err := io.WriteString(w, p.Report.Text(p.Shown))
		return err
	}
	b, err := JSON(p.Report, p.Shown)
	if err == nil {
		_, err = fmt.Fprintf(w, "%s\n", b)
	}
	return err
}

// Engine asks the engine what it is and checks what a run would use (its
// model list, tokenizer, metrics). A malformed address or kind is a
// config.UsageError, before any traffic.
func Engine(ctx context.Context, s Setup) (Probed, error) {
	if s.EngineURL == "" || s.EngineURL == config.BuiltinEngine {
		return Probed{}, config.UsageError{Err: fmt.Errorf("--engine-url: give the engine's address (http://host:port), got %q", s.EngineURL)}
	}
	base, _, err := engine.CheckBaseURL(config.PortOnly(s.EngineURL))
	if err != nil {
		return Probed{}, config.UsageError{Err: fmt.Errorf("--engine-url: %w", err)}
	}
	kind, err := profile.ParseKind(s.Kind, "--engine-kind")
	if err != nil {
		return Probed{}, config.UsageError{Err: err}
	}
	metrics := s.MetricsURL
	if metrics == "" {
		if metrics, err = enginemetrics.URLFor(base); err != nil {
			return Probed{}, config.UsageError{Err: fmt.Errorf("--engine-url: %w", err)}
		}
	} else if err := enginemetrics.CheckURL(metrics); err != nil {
		return Probed{}, config.UsageError{Err: fmt.Errorf("--metrics-url: %w", err)}
	}
	t := profile.Target{Base: base, Root: strings.TrimSuffix(base, "/v1"), APIKey: s.APIKey}
	return Probed{profile.Probe(ctx, t, kind, "--engine-kind", metrics), engine.RedactURL(t.Root)}, nil
}

// JSON is the report as lmbench probe --json prints it.
func JSON(r Report, shown string) ([]byte, error) {
	p := r.Profile
	type fact struct {
		Can  bool   `json:"can"`
		Text string `json:"text"`
	}
	facts := []fact{}
	for _, f := range r.Facts() {
		facts = append(facts, fact{f.OK, f.Text})
	}
	return json.MarshalIndent(struct {
		Engine        string   `json:"engine_url"`
		Kind          string   `json:"kind"`
		Name          string   `json:"name"`
		Version       string   `json:"version"`
		DetectedFrom  string   `json:"detected_from"`
		Models        []string `json:"models"`
		Tokenize      bool     `json:"tokenize"`
		CachedTokens  string   `json:"cached_tokens"`
		MetricsPrefix string   `json:"metrics_prefix"`
		Metrics       bool     `json:"metrics"`
		Facts         []fact   `json:"facts"`
	}{shown, string(p.Kind), p.Name, p.Version, p.DetectedFrom, r.Models, r.Tokenize, p.CachedTokens, p.Metrics, r.Metrics, facts}, "", "  ")
}
