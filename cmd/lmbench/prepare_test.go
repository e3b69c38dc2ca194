package main

import (
	"testing"

	"github.com/lmbench/lmbench/core/host"
)

// A bare port on --engine-url or --lmcache-url means this machine, as in
// the original's setup; anything else is left as typed.
func TestPortOnly(t *testing.T) {
	for in, want := range map[string]string{
		"8000":             "http://localhost:8000",
		" 8080 ":           "http://localhost:8080",
		"localhost:8000":   "localhost:8000",
		"http://h:8000/v1": "http://h:8000/v1",
		"builtin":          "builtin",
		"70000":            "70000",
		"":                 "",
	} {
		if got := host.PortOnly(in); got != want {
			t.Errorf("host.PortOnly(%q) = %q, want %q", in, got, want)
		}
	}
}
