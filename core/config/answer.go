package config

import (
	"fmt"
	"strconv"
)

// CheckAnswer checks a guided-setup answer for o the way the layers and
// Build will: type, enum and the schema's bounds; the engine and LMCache
// addresses as the run reads them. An empty answer keeps the value below.
func CheckAnswer(o *Option, s string) error {
	if s == "" {
		return nil
	}
	switch {
	case o.Key == KeyEngineURL && s == BuiltinEngine:
		return nil
	case o.Key == KeyEngineURL || o.Key == KeyLMCacheURL:
		// Checked as the run will, rather than after the form.
		return CheckURL(s)
	}
	x, err := o.Parse(s)
	if err != nil {
		return err
	}
	var n float64
	switch v := x.(type) {
	case int64:
		n = float64(v)
	case float64:
		n = v
	default:
		return nil
	}
	if positive(o.Key) && n <= 0 {
		// Build rejects these after the form; say it while the
		// person can still fix the answer.
		return fmt.Errorf("must be positive, got %s", s)
	}
	if o.Min != nil && n < *o.Min {
		return fmt.Errorf("must be at least %s, got %s", strconv.FormatFloat(*o.Min, 'g', -1, 64), s)
	}
	if o.Max != nil && n > *o.Max {
		return fmt.Errorf("must be at most %s, got %s", strconv.FormatFloat(*o.Max, 'g', -1, 64), s)
	}
	return nil
}

// positive tells whether an option of lmbench's own must be greater than
// zero (the original's checks of the KV cache volume and tokens per GB).
func positive(key string) bool { return key == KeyKVVolume || key == KeyTokensPerGB }
