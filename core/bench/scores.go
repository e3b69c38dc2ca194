package bench

import (
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// newScoreHold is the hold of a run whose workload named scores and
// negotiated the capability; nil otherwise (nothing is held).
func newScoreHold(p Plan) *export.Scored {
	if len(p.ScoreKeys) == 0 || !p.Capabilities.Has(protocol.Scores) {
		return nil
	}
	return export.NewScored()
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
	for _, rec := range o.scores.Score(scores) {
		o.fan.Add(rec)
	}
}

// export hands rec to the exporters, or holds it for its scores.
func (o *observer) export(rec *record.Record) {
	if o.scores != nil {
		o.scores.Hold(rec)
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
	for _, rec := range o.scores.Release(ph) {
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
