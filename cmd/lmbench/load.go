package main

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/stats"
)

// Config keys of the load options: the host reads both back from the
// run's recorded configuration.
const (
	keyMaxConcurrency = host.MaxConcurrencyKey
	keySLO            = host.SLOKey
	keyIgnoreEOS      = "ignore_eos"
)

// maxConcurrencyLimit bounds --max-concurrency: past it the cap means
// nothing on one machine, and a typo is caught.
const maxConcurrencyLimit = 1 << 20

// loadOptions are the options on the load a run puts on the engine and
// what it counts as good, for any workload.
func loadOptions() []config.Option {
	return []config.Option{
		{Key: keyMaxConcurrency, Type: tInt, Default: int64(0), Label: "Max concurrency", Group: generalGroup, Advanced: true,
			Help: "Most requests in flight at once, for any workload (vLLM's --max-concurrency); a request due while the cap is reached waits, and the wait shows as dispatch lag. 0: no cap."},
		{Key: keySLO, Type: tString, Default: "", Label: "SLO (goodput limits)", Group: generalGroup, Advanced: true,
			Help: "Per-request limits in ms for goodput, as vLLM's --goodput: KEY:MS pairs, comma- or space-separated, KEY one of ttft, tpot, itl (the longest gap), e2e (e.g. ttft:200,tpot:50). A request is good when it succeeded and meets every limit; the summary reports goodput (good requests per second) and the share meeting each limit."},
		{Key: keyIgnoreEOS, Type: tBool, Default: false, Label: "Ignore EOS", Group: generalGroup, Advanced: true,
			Help: "Ask the engine for exactly max_tokens output tokens on every request, for any workload (vLLM bench serve's --ignore-eos): the body gets ignore_eos and min_tokens, which vLLM and SGLang honour; an engine that ignores them may still stop early (output_tokens says)."},
	}
}

// checkLoad checks the load options before anything is sent; an error
// names where the value came from.
func checkLoad(v *config.Values) error {
	if n := v.Int(keyMaxConcurrency); n < 0 || n > maxConcurrencyLimit {
		return fmt.Errorf("%s: must be between 0 (no cap) and %d requests, got %d", v.Origin(keyMaxConcurrency), maxConcurrencyLimit, n)
	}
	if _, err := stats.ParseSLO(v.String(keySLO)); err != nil {
		return fmt.Errorf("%s: %w", v.Origin(keySLO), err)
	}
	return nil
}

// warnLoad logs the summary's warning when the achieved rate fell short
// of the requested one.
func warnLoad(log zerolog.Logger, f stats.Final) {
	if w := f.Load.Warning(); w != "" {
		log.Warn().Msg(w)
	}
}

// loadEntries are the load options to record and export, each only when
// set: the journal's header records them, and the summary (at the run's
// end and on re-export) reads the SLO from there.
func loadEntries(v *config.Values) []config.Entry {
	var out []config.Entry
	if n := v.Int(keyMaxConcurrency); n > 0 {
		out = append(out, config.Entry{Key: keyMaxConcurrency, Value: n})
	}
	if v.Bool(keyIgnoreEOS) {
		out = append(out, config.Entry{Key: keyIgnoreEOS, Value: true})
	}
	if slo, err := stats.ParseSLO(v.String(keySLO)); err == nil && slo.Set() {
		out = append(out, config.Entry{Key: keySLO, Value: slo.String()})
	}
	return out
}
