package config

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestReadRecorded(t *testing.T) {
	t.Parallel()
	def := []float64{50, 90, 99}
	for _, c := range []struct {
		cfg         string
		tokenizer   string
		percentiles []float64
		slo         string
		maxConc     int
		seed        int64
		hasSeed     bool
	}{
		{cfg: `{"tokenizer":"engine","seed":1}`, tokenizer: "engine", percentiles: def, seed: 1, hasSeed: true},
		{cfg: `{"tokenizer":"words"}`, tokenizer: "words", percentiles: def},
		{cfg: `{"seed":1}`, percentiles: def, seed: 1, hasSeed: true}, // a journal from before --tokenizer
		{cfg: ``, percentiles: def},
		{cfg: `not json`, percentiles: def},
		{cfg: `{"percentiles":"99,50","slo":"ttft:200,tpot:50","max_concurrency":8}`,
			percentiles: []float64{50, 99}, slo: "ttft:200,tpot:50", maxConc: 8},
		// A value of another type reads as unset; the other keys still read.
		{cfg: `{"percentiles":7,"tokenizer":"words","seed":"x"}`, tokenizer: "words", percentiles: def},
		{cfg: `{"percentiles":"bad","slo":"nope:1"}`, percentiles: def},
	} {
		got := ReadRecorded(json.RawMessage(c.cfg))
		if got.Tokenizer != c.tokenizer || !slices.Equal(got.Percentiles, c.percentiles) || got.MaxConcurrency != c.maxConc ||
			got.Seed != c.seed || got.HasSeed != c.hasSeed {
			t.Errorf("config %s: %+v", c.cfg, got)
		}
		if s := got.SLO.String(); s != c.slo {
			t.Errorf("config %s: SLO %q, want %q", c.cfg, s, c.slo)
		}
	}
}
