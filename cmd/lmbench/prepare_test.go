package main

import "testing"

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
		if got := portOnly(in); got != want {
			t.Errorf("portOnly(%q) = %q, want %q", in, got, want)
		}
	}
}
