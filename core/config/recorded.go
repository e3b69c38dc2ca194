package config

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/lmbench/lmbench/core/stats"
)

// Recorded is what a finished run's recorded configuration (the journal
// header's config object, the portable entries of Spec.Entries) says
// about how its numbers are computed, read back typed: the summary at a
// run's end, a re-export, a merge and lmbench compare all take these from
// here, so none of them looks an option up by its key.
type Recorded struct {
	// Percentiles are the summary's percentiles (stats.DefaultPercentiles
	// when the run recorded none, or none that parse: the value was
	// checked before the run).
	Percentiles []float64
	// SLO is the run's goodput limits (none when unset).
	SLO stats.SLO
	// MaxConcurrency is the cap on requests in flight (0: none).
	MaxConcurrency int
	// Tokenizer is what the workload counted prompt lengths in ("" for a
	// run recorded before --tokenizer).
	Tokenizer string
	// Seed is the run's seed; HasSeed is false when none was recorded.
	Seed    int64
	HasSeed bool
}

// ReadRecorded reads a run's recorded configuration (a JSON object; empty
// or unreadable reads as the defaults, and so does a key whose value has
// another type).
func ReadRecorded(raw json.RawMessage) Recorded {
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m) // a config of another shape: the defaults
	}
	r := Recorded{}
	var s string
	if field(m, keyPercentiles, &s) {
		r.Percentiles, _ = stats.ParsePercentiles(s)
	}
	if r.Percentiles == nil {
		r.Percentiles, _ = stats.ParsePercentiles(stats.DefaultPercentiles)
	}
	if field(m, keySLO, &s) {
		if slo, err := stats.ParseSLO(s); err == nil {
			r.SLO = slo
		}
	}
	var n int64
	if field(m, keyMaxConcurrency, &n) {
		r.MaxConcurrency = int(n)
	}
	field(m, keyTokenizer, &r.Tokenizer)
	if field(m, keySeed, &n) {
		r.Seed, r.HasSeed = n, true
	}
	return r
}

// field decodes m[key] into dst, reporting whether it was there with a
// value of dst's type.
func field[T any](m map[string]json.RawMessage, key string, dst *T) bool {
	b, ok := m[key]
	if !ok {
		return false
	}
	var v T
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	*dst = v
	return true
}

// Config keys that Recorded reads: lmbench run's options (run.go).
const (
	keyPercentiles    = "percentiles"
	keySLO            = "slo"
	keyMaxConcurrency = "max_concurrency"
	keyTokenizer      = "tokenizer"
	keySeed           = "seed"
)

// runKeys are the config keys of lmbench run's own options (and the keys
// it tolerates), built once.
var runKeys = sync.OnceValue(func() map[string]bool {
	r := NewRunRegistry()
	keys := map[string]bool{}
	for k := range r.byKey {
		keys[k] = true
	}
	for k := range r.tolerated {
		keys[k] = true
	}
	return keys
})

// IsRunKey says whether key is one of lmbench run's own options' keys (or
// the built-in engine's, SimKeyPrefix), not a plugin's: the rest of a
// recorded configuration is the workload's options.
func IsRunKey(key string) bool {
	return runKeys()[key] || strings.HasPrefix(key, SimKeyPrefix)
}
