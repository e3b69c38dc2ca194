package report

// EngineProfile is the engine a run measured, as lmbench found it (core/
// engine/profile): what it reports, and what lmbench could and could not
// measure there, in plain words.
type EngineProfile struct {
	Kind, Name, Version, DetectedFrom string
	// Tokenizer is its tokenizer endpoint ("" none); CachedTokens where
	// its responses report cached prompt tokens ("" none); Metrics the
	// prefix of its Prometheus series ("" none); Reset its cache reset
	// ("POST /flush_cache"; "" none).
	Tokenizer, CachedTokens, Metrics, Reset string
	IgnoreEOS, MinTokens, Seed              bool
	// Can and Cannot are what lmbench can and cannot measure on it.
	Can, Cannot []string
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
