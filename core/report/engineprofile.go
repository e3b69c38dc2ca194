package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/core/stats"
)

// EngineProfile is the engine a run measured, as lmbench found it (core/
// engine/profile): what it reports, and what lmbench could and could not
// measure there, in plain words.
//
// Its JSON form (the tags) is what the journal's header keeps
// (record.Run.Engine), read back by ParseEngineProfile.
type EngineProfile struct {
	Kind         string `json:"kind"`
	Name         string `json:"name"`
	Version      string `json:"version,omitempty"`
	DetectedFrom string `json:"detected_from"`
	// Tokenizer is its tokenizer endpoint ("" none); CachedTokens where
	// its responses report cached prompt tokens ("" none); Metrics the
	// prefix of its Prometheus series ("" none); Reset its cache reset
	// ("POST /flush_cache"; "" none).
	Tokenizer    string `json:"tokenizer,omitempty"`
	CachedTokens string `json:"cached_tokens,omitempty"`
	Metrics      string `json:"metrics_prefix,omitempty"`
	Reset        string `json:"cache_reset,omitempty"`
	IgnoreEOS    bool   `json:"ignore_eos"`
	MinTokens    bool   `json:"min_tokens"`
	Seed         bool   `json:"seed"`
	// Can and Cannot are what lmbench can and cannot measure on it.
	Can    []string `json:"can"`
	Cannot []string `json:"cannot"`
}

// ParseEngineProfile reads the engine a journal's header recorded; nil
// for none (a journal written before it was) or one that does not read.
func ParseEngineProfile(raw json.RawMessage) *EngineProfile {
	if len(raw) == 0 {
		return nil
	}
	var e EngineProfile
	if json.Unmarshal(raw, &e) != nil || e.Kind == "" {
		return nil
	}
	return &e
}

// withEngineProfile appends bench_summary.json's "engine" member; doc is
// unchanged without one (a summary recomputed from a journal).
func withEngineProfile(doc []kv, e *EngineProfile) []kv {
	if e == nil {
		return doc
	}
	return append(doc, kv{"engine", []kv{
		{"kind", e.Kind},
		{"name", e.Name},
		{"version", orNull(e.Version)},
		{"detected_from", e.DetectedFrom},
		{"tokenizer", orNull(e.Tokenizer)},
		{"cached_tokens", orNull(e.CachedTokens)},
		{"metrics_prefix", orNull(e.Metrics)},
		{"cache_reset", orNull(e.Reset)},
		{"honours", []kv{{"ignore_eos", e.IgnoreEOS}, {"min_tokens", e.MinTokens}, {"seed", e.Seed}}},
		{"can", append([]string{}, e.Can...)},
		{"cannot", append([]string{}, e.Cannot...)},
	}})
}

// streamSection is the terminal's "Stream checks" section: requests
// whose answers lmbench could not take at their word; "" when none.
func streamSection(run Run, f stats.Final) string {
	if f.CoarseStreams == 0 && run.ShortUnderIgnoreEOS == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(center(" Stream checks ", Width, '-') + "\n")
	b.WriteString(entry{"Coarse streams (no decode/TPOT/ITL)", f.CoarseStreams}.String() + "\n")
	b.WriteString(entry{"Short under ignore_eos", run.ShortUnderIgnoreEOS}.String() + "\n")
	var text []string
	if f.CoarseStreams > 0 {
		text = append(text, fmt.Sprintf("WARNING: %d measured requests streamed their tokens in far fewer chunks than their usage "+
			"counts: their decode speed, TPOT and ITL are left out", f.CoarseStreams))
	}
	if run.ShortUnderIgnoreEOS > 0 {
		text = append(text, fmt.Sprintf("WARNING: %d requests asked for exactly max_tokens (ignore_eos) and got fewer: "+
			"the engine ignored ignore_eos; output lengths are not what the workload set", run.ShortUnderIgnoreEOS))
	}
	for _, s := range text {
		for i, line := range wrap(s, Width-2) {
			if i > 0 {
				line = "  " + line
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// withStreamChecks appends bench_summary.json's "stream_checks" member
// when a check flagged a request; doc is unchanged otherwise.
func withStreamChecks(doc []kv, run Run, f stats.Final) []kv {
	if f.CoarseStreams == 0 && run.ShortUnderIgnoreEOS == 0 {
		return doc
	}
	return append(doc, kv{"stream_checks", []kv{
		{"coarse_streams", f.CoarseStreams},
		{"short_under_ignore_eos", run.ShortUnderIgnoreEOS},
	}})
}
