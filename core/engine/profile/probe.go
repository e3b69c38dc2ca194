package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Report is what Probe found: the engine's profile, the models it serves,
// and whether its tokenizer and metrics answered.
type Report struct {
	Profile Profile
	Models  []string
	// ModelsError is why the model list could not be read ("" when it was).
	ModelsError string
	// Tokenize: the profile's tokenizer endpoint answered a count;
	// Metrics: its /metrics answered with the profile's series.
	Tokenize, Metrics bool
	MetricsURL        string
}

// Probe asks the engine what it is (Detect, unless kind names it: Auto
// detects) and checks what a run would use: the model list, /tokenize,
// /metrics (metricsURL; "" skips it).
func Probe(ctx context.Context, t Target, kind Kind, kindOrigin, metricsURL string) Report {
	var r Report
	if kind == Auto || kind == "" {
		r.Profile = Detect(ctx, t)
	} else {
		r.Profile = Given(kind, kindOrigin)
	}
	models, err := ListModels(ctx, t.Base, t.APIKey, t.client())
	if err != nil {
		r.ModelsError = err.Error()
	}
	for _, m := range models {
		r.Models = append(r.Models, m.ID)
	}
	if len(r.Models) > 0 {
		r.Tokenize = tokenizes(ctx, t, r.Profile.Tokenizer, r.Models[0])
	}
	if metricsURL != "" && r.Profile.Metrics != "" {
		body, ok := get(ctx, t, metricsURL)
		r.Metrics = ok && bytes.Contains(body, []byte(r.Profile.Metrics))
		r.MetricsURL = metricsURL
	}
	return r
}

// tokenizes reports whether the engine's tokenizer endpoint counts a
// short text in the profile's shape.
func tokenizes(ctx context.Context, t Target, tok Tokenizer, model string) bool {
	if tok.Path == "" {
		return false
	}
	var body any
	switch tok.Shape {
	case ShapeLlamaCpp:
		body = map[string]any{"content": "hi"}
	case ShapeTGI:
		body = map[string]any{"inputs": "hi"}
	default:
		body = map[string]any{"model": model, "prompt": "hi"}
	}
	b, _ := json.Marshal(body)
	resp, err := do(ctx, t, http.MethodPost, strings.TrimSuffix(t.Root, "/")+tok.Path, bytes.NewReader(b))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode/100 != 2 {
		return false
	}
	n, ok := CountOf(tok.Shape, out)
	return ok && n > 0
}

// CountOf reads the token count from a tokenizer endpoint's answer in
// shape: vLLM's and SGLang's "count" (or their "tokens"), llama.cpp's
// "tokens", TGI's list of tokens.
func CountOf(shape Shape, body []byte) (int, bool) {
	if shape == ShapeTGI {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) != nil {
			return 0, false
		}
		return len(list), true
	}
	var m struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if json.Unmarshal(body, &m) != nil {
		return 0, false
	}
	if m.Count != nil {
		return *m.Count, true
	}
	return len(m.Tokens), m.Tokens != nil
}

// Fact is one thing lmbench can or cannot measure on the engine.
type Fact struct {
	OK   bool
	Text string
}

// Facts say in plain words what the engine reports and what that means
// for a run.
func (r Report) Facts() []Fact {
	p := r.Profile
	var out []Fact
	add := func(ok bool, format string, a ...any) { out = append(out, Fact{ok, fmt.Sprintf(format, a...)}) }
	switch {
	case r.ModelsError != "":
		add(false, "model list: %s", r.ModelsError)
	case len(r.Models) > 1:
		add(true, "serves %d models (%s): a run needs --model to choose one", len(r.Models), strings.Join(r.Models, ", "))
	case len(r.Models) == 1:
		add(true, "serves one model, %s: a run picks it without --model", r.Models[0])
	}
	switch {
	case r.Tokenize:
		add(true, "tokenizer at %s: prompt lengths are counted in the model's tokens", p.Tokenizer.Path)
	case p.Tokenizer.Path != "":
		add(false, "its tokenizer (%s) did not answer: prompt lengths fall back to words unless --tokenizer PATH names the model's tokenizer.json", p.Tokenizer.Path)
	default:
		add(false, "no tokenizer endpoint: prompt lengths fall back to words unless --tokenizer PATH names the model's tokenizer.json")
	}
	switch {
	case p.ReportsCachedTokens():
		add(true, "cached prompt tokens reported in %s%s: the cache ledger counts them", p.CachedTokens, paren(p.CachedNote))
	case p.CachedTokens != "":
		add(false, "cached prompt tokens only in %s, which lmbench does not read: the cache ledger will use TTFT only "+
			"(reuse inferred from warm against cold requests)", p.CachedTokens)
	default:
		add(false, "no cached token counts: the cache ledger will use TTFT only (reuse inferred from warm against cold requests)")
	}
	switch {
	case p.Kind == Unknown:
		add(false, "metrics not known for this engine: a run scrapes its /metrics and says if that fails (--no-metrics: none)")
	case r.Metrics:
		add(true, "metrics at %s (%s series): the ledger sets the engine's counters beside the requests'", r.MetricsURL, p.Metrics)
	case p.Metrics != "" && r.MetricsURL != "":
		add(false, "no %s series at %s%s: no engine counters in the ledger (--no-metrics silences the scrape)", p.Metrics, r.MetricsURL, paren(p.MetricsNote))
	case p.Metrics == "":
		add(false, "no Prometheus metrics: no engine counters in the ledger; run with --no-metrics")
	}
	if p.Reset.Path != "" {
		add(true, "cache reset: %s %s%s", p.Reset.Method, p.Reset.Path, paren(p.Reset.Note))
	} else {
		add(false, "no cache reset: --reset-cache cannot empty it; restart the engine for a cold start")
	}
	add(p.Extras.IgnoreEOS && p.Extras.MinTokens, "%s", extrasText(p.Extras))
	return out
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func extrasText(e Extras) string {
	var yes, no []string
	for _, x := range []struct {
		name string
		ok   bool
	}{{"ignore_eos", e.IgnoreEOS}, {"min_tokens", e.MinTokens}, {"seed", e.Seed}} {
		if x.ok {
			yes = append(yes, x.name)
		} else {
			no = append(no, x.name)
		}
	}
	switch {
	case len(no) == 0:
		return "honours " + strings.Join(yes, ", ") + ": --ignore-eos gives exact output lengths"
	case len(yes) == 0:
		return "ignores " + strings.Join(no, ", ") + ": answers may end before max_tokens; lmbench flags each one that does under --ignore-eos"
	}
	return "honours " + strings.Join(yes, ", ") + ", ignores " + strings.Join(no, ", ") +
		": answers may end before max_tokens; lmbench flags each one that does under --ignore-eos"
}

// Text is the report as lmbench probe prints it.
func (r Report) Text(shown string) string {
	var b strings.Builder
	p := r.Profile
	name := p.Name
	if p.Version != "" {
		name += " " + p.Version
	}
	fmt.Fprintf(&b, "Engine at %s: %s (%s, from %s)\n", shown, name, p.Kind, p.DetectedFrom)
	for _, f := range r.Facts() {
		mark := "  can:    "
		if !f.OK {
			mark = "  cannot: "
		}
		b.WriteString(mark + f.Text + "\n")
	}
	return b.String()
}
