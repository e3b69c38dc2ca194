package workload_test

import (
	"testing"

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
