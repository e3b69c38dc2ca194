package bench

import (
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/tokenize"
)

// EngineProfile is the summary's engine block: the engine's profile and
// what lmbench can and cannot measure on it, as this run found it (the
// model it benchmarked, the tokenizer it counted with).
func (p *Prepared) EngineProfile() *report.EngineProfile {
	pr := p.Profile
	if pr.Kind == "" {
		return nil
	}
	r := profile.Report{Profile: pr, Models: []string{p.Served}, Tokenize: p.Tokenizer == tokenize.Engine}
	out := &report.EngineProfile{Kind: string(pr.Kind), Name: pr.Name, Version: pr.Version, DetectedFrom: pr.DetectedFrom,
		Tokenizer: pr.Tokenizer.Path, Metrics: pr.Metrics,
		IgnoreEOS: pr.Extras.IgnoreEOS, MinTokens: pr.Extras.MinTokens, Seed: pr.Extras.Seed}
	if pr.ReportsCachedTokens() { // where lmbench reads them
		out.CachedTokens = pr.CachedTokens
	}
	if pr.Reset.Path != "" {
		out.Reset = pr.Reset.Method + " " + pr.Reset.Path
	}
	for _, f := range r.Facts()[1:] { // not the model list: the summary names the model
		if f.OK {
			out.Can = append(out.Can, f.Text)
		} else {
			out.Cannot = append(out.Cannot, f.Text)
		}
	}
	return out
}

// noCachedTokens names the engine when its profile says it reports no
// cached tokens ("" when it does).
func (p *Prepared) noCachedTokens() string {
	if p.Profile.Kind == "" || p.Profile.ReportsCachedTokens() {
		return ""
	}
	return p.Profile.Name
}
