package bench

import (
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// scoreHold keeps the records of a run whose workload scores its answers
// (protocol.Scores) from the exporters until their scores come back, a
// Step or two after they finished, so every exporter's row has them. The
// journal does not wait: it has the record at once and the scores on
// "score" lines after it.
type scoreHold struct {
	pending map[string]*record.Record // by scoreKey
}

func scoreKey(ph protocol.Phase, id string) string { return ph.String() + "\x00" + id }

// newScoreHold is the hold of a run whose workload named scores and
// negotiated the capability; nil otherwise (nothing is held).
func newScoreHold(p Plan) *scoreHold {
	if len(p.ScoreKeys) == 0 || !p.Capabilities.Has(protocol.Scores) {
		return nil
	}
	return &scoreHold{pending: map[string]*record.Record{}}
}

// hold keeps rec for its scores.
func (h *scoreHold) hold(rec *record.Record) {
	h.pending[scoreKey(rec.Phase, rec.RequestID)] = rec
}

// scored puts scores on their held records and returns those records,
// now complete, for the exporters.
func (h *scoreHold) scored(scores []protocol.Score) []*record.Record {
	var out []*record.Record
	for _, s := range scores {
		k := scoreKey(s.Phase, s.RequestID)
		if rec, ok := h.pending[k]; ok {
			rec.Scores = s.Values
			delete(h.pending, k)
			out = append(out, rec)
		}
	}
	return out
}

// release returns the held records of phase (all phases: 0), unscored:
// the workload has heard of all of them and gave these no score.
func (h *scoreHold) release(ph protocol.Phase) []*record.Record {
	var out []*record.Record
	for k, rec := range h.pending {
		if ph == 0 || rec.Phase == ph {
			out = append(out, rec)
			delete(h.pending, k)
		}
	}
	return out
}

// Scored takes the workload's scores (runloop.ScoreObserver): they go to
// the journal, and the records they complete to the exporters.
func (o *observer) Scored(scores []protocol.Score) {
	if err := o.keep.addScores(scores); err != nil {
		o.log.Error().Str("error", err.Error()).Msg("journal write failed: the answers' scores are on the exporters' records only")
	}
	if o.scores == nil {
		return
	}
	for _, rec := range o.scores.scored(scores) {
		o.fan.Add(rec)
	}
}

// export hands rec to the exporters, or holds it for its scores.
func (o *observer) export(rec *record.Record) {
	if o.scores != nil {
		o.scores.hold(rec)
		return
	}
	o.fan.Add(rec)
}

// releaseScored hands the exporters the records of phase still held
// (0: every phase), with no score.
func (o *observer) releaseScored(ph protocol.Phase) {
	if o.scores == nil {
		return
	}
	for _, rec := range o.scores.release(ph) {
		o.fan.Add(rec)
	}
}

// addScores writes scores to whichever journal is in use. The records
// they belong to may be kept in memory (the journal failed): those get
// theirs from Scored through the hold, or not at all without one.
func (k *keeper) addScores(scores []protocol.Score) error {
	j := k.primary
	switch {
	case k.failed != nil && k.fb == nil:
		return nil
	case k.failed != nil:
		j = k.fb
	}
	if err := j.AppendScores(scores...); err != nil {
		return err
	}
	return j.Flush()
}
