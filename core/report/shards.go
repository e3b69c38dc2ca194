package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// ShardPart is one shard of a merged run as the merge found it: its
// header's shard block, how it ended, and its measured requests.
type ShardPart struct {
	record.Shard
	Dir     string // where its journal was
	Status  record.Status
	Reason  string
	Planned int // 0: not known
	Sent    int
	// Records is how many records (both phases) the merge took from it.
	Records int
	// Missing: no journal of this shard was found (a partial merge).
	Missing bool
	// MeasureLag is how long after the earliest shard's this shard's
	// measured phase started (on the reference clock): the shift of its
	// part of an open-loop schedule. Negative: not known.
	MeasureLag time.Duration
}

// shardJSON is the part of the summary a shard's block shows.
func shardJSON(s record.Shard) []kv {
	var startAt any
	if !s.StartAt.IsZero() {
		startAt = s.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return []kv{
		{"index", s.Index},
		{"count", s.Count},
		{"run_id", s.RunID},
		{"config_hash", s.ConfigHash},
		{"seed", s.Seed},
		{"host", orNull(s.Host)},
		{"start_at", startAt},
		{"lateness_ms", ms(s.Lateness)},
		{"clock", []kv{
			{"reference", s.Clock.Reference},
			{"offset_ms", ms(s.Clock.Offset)},
			{"rtt_ms", ms(s.Clock.RTT)},
			{"samples", s.Clock.Samples},
		}},
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// withShards adds the shard block of a shard's run, or the shards of a
// merged one.
func withShards(doc []kv, run Run) []kv {
	if run.Shard != nil {
		doc = append(doc, kv{"shard", shardJSON(*run.Shard)})
	}
	if run.Shards == nil {
		return doc
	}
	parts := make([][]kv, len(run.Shards))
	for i, p := range run.Shards {
		if p.Missing {
			parts[i] = []kv{{"index", p.Index}, {"count", p.Count}, {"missing", true}}
			continue
		}
		parts[i] = append(shardJSON(p.Shard),
			kv{"dir", p.Dir}, kv{"status", string(p.Status)}, kv{"reason", orNull(p.Reason)},
			kv{"planned_requests", orNullInt(p.Planned)}, kv{"sent_requests", p.Sent}, kv{"records", p.Records},
			kv{"measure_start_lag_ms", lagJSON(p.MeasureLag)}, kv{"missing", false})
	}
	return append(doc, kv{"shards", parts})
}

// shardSection is the terminal's lines on the shards, "" for a run that
// is neither a shard nor merged.
func shardSection(run Run) string {
	var b strings.Builder
	switch {
	case run.Shard != nil:
		s := run.Shard
		b.WriteString(center(" Shard ", Width, '-') + "\n")
		b.WriteString(entry{"Shard", fmt.Sprintf("%d of %d (index from 0)", s.Index, s.Count)}.String() + "\n")
		b.WriteString(entry{"Config hash", shortHash(s.ConfigHash)}.String() + "\n")
		b.WriteString(entry{"Clock", clockLine(*s)}.String() + "\n")
		if !s.StartAt.IsZero() {
			b.WriteString(entry{"Start lateness (ms)", ms(s.Lateness)}.String() + "\n")
		}
	case run.Shards != nil:
		b.WriteString(center(" Shards (merged) ", Width, '-') + "\n")
		for _, p := range run.Shards {
			id := strconv.Itoa(p.Index) + "/" + strconv.Itoa(p.Count)
			if p.Missing {
				b.WriteString(entry{"Shard " + id, "MISSING"}.String() + "\n")
				continue
			}
			b.WriteString(entry{"Shard " + id, fmt.Sprintf("%s, %d sent", p.Status, p.Sent)}.String() + "\n")
			b.WriteString(fmt.Sprintf("  %s; late %.1f ms\n", clockLine(p.Shard), ms(p.Lateness)))
			if p.MeasureLag >= 0 {
				b.WriteString(fmt.Sprintf("  measured phase +%.1f ms after the first shard's\n", ms(p.MeasureLag)))
			}
		}
	}
	return b.String()
}

// clockLine is a shard's clock in a few words.
func clockLine(s record.Shard) string {
	if s.Clock.Samples == 0 {
		return s.Clock.Reference + " (offset not measured)"
	}
	return fmt.Sprintf("%+.3f ms ±%.3f (%s)", ms(s.Clock.Offset), ms(s.Clock.RTT)/2, s.Clock.Reference)
}

func shortHash(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

func lagJSON(d time.Duration) any {
	if d < 0 {
		return nil
	}
	return ms(d)
}
