package probe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/config"
)

// A malformed address, kind or metrics URL is a usage error naming the
// flag, before any traffic (none of these addresses is contacted).
func TestEngineRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    Setup
		flag string
	}{
		{"no engine", Setup{}, "--engine-url"},
		{"built-in", Setup{EngineURL: config.BuiltinEngine}, "--engine-url"},
		{"scheme", Setup{EngineURL: "ftp://localhost:1"}, "--engine-url"},
		{"kind", Setup{EngineURL: "http://127.0.0.1:1", Kind: "no-such-engine"}, "--engine-kind"},
		{"metrics", Setup{EngineURL: "http://127.0.0.1:1", MetricsURL: "not a url"}, "--metrics-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Engine(context.Background(), tc.s)
			var ue config.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("Engine(%+v) = %v, want a usage error naming %s", tc.s, err, tc.flag)
			}
		})
	}
}
