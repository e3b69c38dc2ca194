package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// ShardField is the banner line of a sharded run: the shard and the first
// few of the units it owns out of n, e.g. "1/3: documents 1, 4, 7, 10, …
// (4 of 11)".
func ShardField(s Shard, unit string, n int) Field {
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
	return Field{Label: "Shard", Value: fmt.Sprintf("%s: %s %s (%d of %d)", s, unit, list, s.Owned(n), n)}
}
