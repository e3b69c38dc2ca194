package workload

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/option"
)

// ShardField is the banner line of a sharded run: the shard and the first
// few of the units it owns out of n, e.g. "1/3: documents 1, 4, 7, 10, …
// (4 of 11)".
func ShardField(s Shard, unit string, n int) Field {
	return Field{Label: "Shard", Value: fmt.Sprintf("%s: %s %s", s, unit, OwnedList(s, n))}
}

// OwnedList is the first few of the ordinals 0..n-1 the shard owns and
// how many: "1, 4, 7, 10, … (67 of 200)", "none (0 of 2)".
func OwnedList(s Shard, n int) string {
	var first []string
	for k := s.Index; k < n && len(first) < 4; k += max(s.Count, 1) {
		first = append(first, strconv.Itoa(k))
	}
	list := strings.Join(first, ", ")
	switch {
	case len(first) == 0:
		list = "none"
	case s.Owned(n) > len(first):
		list += ", …"
	}
	return fmt.Sprintf("%s (%d of %d)", list, s.Owned(n), n)
}

// Divide is the shard's part of a run-wide count n (Shard.Share): n of
// what ("in flight") set by the option named. A count smaller than the
// number of shards is an error naming the option, and every shard gives
// it, not only those it would leave without: no shard then waits for
// others that refused.
func Divide(s Shard, opt string, n int, what string) (int, error) {
	if s.Sharded() && n < s.Count {
		return 0, option.Errorf(opt,
			"%d %s cannot be divided among %d shards (--shard %s): it is the whole run's limit, each shard needs at least 1; raise it to %d or use fewer shards",
			n, what, s.Count, s, s.Count)
	}
	return s.Share(n), nil
}
