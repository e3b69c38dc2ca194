package workload_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

func TestShardField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    workload.Shard
		n    int
		want string
	}{
		{workload.Shard{Index: 1, Count: 3}, 11, "1/3: documents 1, 4, 7, 10 (4 of 11)"},
		{workload.Shard{Index: 0, Count: 2}, 11, "0/2: documents 0, 2, 4, 6, … (6 of 11)"},
		{workload.Shard{Index: 2, Count: 3}, 2, "2/3: documents none (0 of 2)"},
	} {
		if got := workload.ShardField(tc.s, "documents", tc.n); got.Label != "Shard" || got.Value != tc.want {
			t.Errorf("ShardField(%v, %d) = %+v, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestDivide(t *testing.T) {
	t.Parallel()
	if n, err := workload.Divide(workload.Shard{Index: 2, Count: 3}, "inflight", 7, "in flight"); err != nil || n != 2 {
		t.Errorf("Divide(7 among 3, shard 2) = %d, %v; want 2", n, err)
	}
	if n, err := workload.Divide(workload.Shard{}, "inflight", 2, "in flight"); err != nil || n != 2 {
		t.Errorf("unsharded Divide(2) = %d, %v; want 2", n, err)
	}
	// Shard 0 would get one of 2, but the run cannot be divided: it refuses too.
	_, err := workload.Divide(workload.Shard{Index: 0, Count: 3}, "inflight", 2, "in flight")
	var fe *option.FieldError
	if !errors.As(err, &fe) || fe.Option != "inflight" || !strings.Contains(fe.Message, "2 in flight cannot be divided among 3 shards (--shard 0/3)") {
		t.Errorf("Divide(2 among 3) = %v", err)
	}
}
