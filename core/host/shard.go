package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// ConfigHash identifies a run's configuration (its resolved configuration
// as the journal records it): "sha256:" and the hash of its canonical
// JSON (keys sorted), so the shards of one run, whose configurations are
// the same whatever order their files wrote the keys in, share it.
func ConfigHash(cfg json.RawMessage) string {
	var v any
	b := []byte(cfg)
	if json.Unmarshal(cfg, &v) == nil {
		if c, err := json.Marshal(v); err == nil {
			b = c
		}
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ShardRunID is the id the shards of a run started at start share when
// none is given: the start time and the configuration's hash, so every
// shard derives the same.
func ShardRunID(start time.Time, configHash string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + strings.TrimPrefix(configHash, "sha256:")[:8]
}

// GateError is a phase gate failing (Plan.BeforePhase): the shards of a
// sharded run could not start a phase together.
type GateError struct{ Err error }

func (e *GateError) Error() string { return e.Err.Error() }
func (e *GateError) Unwrap() error { return e.Err }
