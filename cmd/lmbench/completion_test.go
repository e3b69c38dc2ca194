package main

import (
	"slices"
	"testing"
)

func TestComplete(t *testing.T) {
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{""}, subcommands},
		{[]string{"r"}, []string{"run"}},
		{[]string{"e"}, []string{"export"}},
		{[]string{"export", "--jo"}, []string{"--journal"}},
		{[]string{"export", "--journal", ""}, nil}, // a path
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"run", "--log-l"}, []string{"--log-level"}},
		{[]string{"run", "--log-level", "d"}, []string{"debug"}},
		{[]string{"run", "--log-format", ""}, []string{"auto", "console", "json"}},
		{[]string{"run", "--config", ""}, nil}, // a path: the shell completes files
		{[]string{"run", "--json", "--no-i"}, []string{"--no-interactive"}},
		{[]string{"sim", "--po"}, []string{"--port"}},
		{[]string{"sim", "--port", ""}, nil}, // a value, not the flags again
	}
	for _, c := range cases {
		if got := complete(c.words); !slices.Equal(got, c.want) {
			t.Errorf("complete(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}
