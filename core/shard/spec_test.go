package shard

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/config"
)

func TestFromSpec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		in   config.Shard
		want string // the coordinator's type, or the error
	}{
		{"unsharded", config.Shard{}, "<nil>"},
		{"start at", config.Shard{Part: "1/3", StartAt: "1767225600", RunID: "r"}, "shard.FixedStart"},
		{"barrier", config.Shard{Part: "0/2", Barrier: "http://127.0.0.1:7070"}, "*shard.Barrier"},
		{"bad part", config.Shard{Part: "3/3", Origin: "--shard", StartAt: "1767225600"}, "--shard: "},
		{"bad start", config.Shard{Part: "0/2", StartAt: "soon", StartAtOrigin: "LMBENCH_START_AT"}, "LMBENCH_START_AT: "},
		{"bad barrier", config.Shard{Part: "0/2", Barrier: "ftp://x", BarrierOrigin: "--barrier"}, "--barrier: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := FromSpec(c.in)
			got := "<nil>"
			switch {
			case err != nil:
				got = err.Error()
			case p != nil:
				got = typeName(p.Coordinator)
				if p.Shard.String() != c.in.Part || p.RunID != c.in.RunID {
					t.Errorf("part %v run %q, want %s and %q", p.Shard, p.RunID, c.in.Part, c.in.RunID)
				}
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("FromSpec = %q, want %q…", got, c.want)
			}
		})
	}
}

func typeName(c Coordinator) string {
	switch c.(type) {
	case FixedStart:
		return "shard.FixedStart"
	case *Barrier:
		return "*shard.Barrier"
	}
	return "?"
}
