package config

import (
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Entry is one exported key and value.
type Entry struct {
	Key   string
	Value any
}

// Marshal renders entries in the format path's extension names. JSON
// keeps the order and the original's look (indent 2, floats with ".0",
// trailing newline); YAML and TOML go through koanf's parsers.
func Marshal(path string, entries []Entry) ([]byte, error) {
	p, err := Parser(path)
	if err != nil {
		return nil, err
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".json" || ext == "" {
		b, err := stdjson.MarshalIndent(ordered(entries), "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	m := map[string]any{}
	for _, e := range entries {
		if d, ok := e.Value.(time.Duration); ok {
			m[e.Key] = d.String()
		} else {
			m[e.Key] = e.Value
		}
	}
	return p.Marshal(m)
}

// Write writes entries to path (see Marshal).
func Write(path string, entries []Entry) error {
	b, err := Marshal(path, entries)
	if err != nil {
		return fmt.Errorf("--export-config %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("--export-config: %w", err)
	}
	return nil
}

// ordered is a JSON object that keeps its keys in order.
type ordered []Entry

// MarshalJSON implements json.Marshaler.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := stdjson.Marshal(e.Key)
		var v []byte
		var err error
		switch x := e.Value.(type) {
		case float64:
			v = []byte(pyFloat(x))
		case time.Duration:
			v, err = stdjson.Marshal(x.String())
		default:
			v, err = stdjson.Marshal(x)
		}
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", e.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// JSON renders entries as one compact, ordered JSON object.
func JSON(entries []Entry) ([]byte, error) { return stdjson.Marshal(ordered(entries)) }

// pyFloat writes a float as Python's json does for finite values (100.0, not 100).
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
