package report

import (
	"bytes"
	"encoding/json"
	"strings"
)

// simKeyPrefix starts the recorded configuration's keys of the built-in
// engine's settings (core/config's SimKeyPrefix).
const simKeyPrefix = "sim_"

// Setting is one key of a run's recorded configuration and its value: a
// string, bool, int64 or float64.
type Setting struct {
	Key   string
	Value any
}

// SimSettings returns the built-in engine's settings (the sim_* keys) of
// a run's recorded configuration (the journal header's config JSON), in
// their order; none for a run against another engine or one recorded
// before they were. Numbers written without a fraction are integers, as
// the configuration writes every float with one ("8.0").
func SimSettings(recorded []byte) []Setting {
	return settings(recorded, func(key string) bool { return strings.HasPrefix(key, simKeyPrefix) })
}

// WorkloadSettings returns the workload's options of a run's recorded
// configuration, in their order: every key but lmbench's own (host) and
// the built-in engine's.
func WorkloadSettings(recorded []byte, host func(key string) bool) []Setting {
	return settings(recorded, func(key string) bool { return !host(key) && !strings.HasPrefix(key, simKeyPrefix) })
}

// settings returns the keys of a recorded configuration keep keeps.
func settings(recorded []byte, keep func(key string) bool) []Setting {
	dec := json.NewDecoder(bytes.NewReader(recorded))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []Setting
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return out
		}
		if !keep(key) {
			continue
		}
		if n, ok := v.(json.Number); ok {
			v = number(n)
		}
		switch v.(type) {
		case string, bool, int64, float64:
			out = append(out, Setting{Key: key, Value: v})
		}
	}
	return out
}

// number is n as an int64 when written without a fraction or exponent,
// else as a float64.
func number(n json.Number) any {
	if !strings.ContainsAny(n.String(), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	f, _ := n.Float64()
	return f
}

// members are the settings as members of the summary's config.
func members(settings []Setting) []kv {
	out := make([]kv, 0, len(settings))
	for _, s := range settings {
		out = append(out, kv{s.Key, s.Value})
	}
	return out
}
