package export

import (
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Scored keeps the records of a run whose workload scores its answers
// (protocol.Scores) from the exporters until their scores come back, a
// Step or two after they finished, so every exporter's row has them. The
// journal does not wait: it has the record at once and the scores on
// "score" lines after it. Not safe for concurrent use (the run loop's
// observer calls it from one goroutine).
type Scored struct {
	pending map[string]*record.Record // by phase and request id
}

// NewScored is an empty hold.
func NewScored() *Scored { return &Scored{pending: map[string]*record.Record{}} }

func scoredKey(ph protocol.Phase, id string) string { return ph.String() + "\x00" + id }

// Hold keeps rec for its scores.
func (h *Scored) Hold(rec *record.Record) {
	h.pending[scoredKey(rec.Phase, rec.RequestID)] = rec
}

// Score puts scores on their held records and returns those records, now
// complete, for the exporters.
func (h *Scored) Score(scores []protocol.Score) []*record.Record {
	var out []*record.Record
	for _, s := range scores {
		k := scoredKey(s.Phase, s.RequestID)
		if rec, ok := h.pending[k]; ok {
			rec.Scores = s.Values
			delete(h.pending, k)
			out = append(out, rec)
		}
	}
	return out
}

// Release returns the held records of phase (every phase: 0), unscored:
// the workload has heard of all of them and gave these no score.
func (h *Scored) Release(ph protocol.Phase) []*record.Record {
	var out []*record.Record
	for k, rec := range h.pending {
		if ph == 0 || rec.Phase == ph {
			out = append(out, rec)
			delete(h.pending, k)
		}
	}
	return out
}
