package main

import (
	"os/exec"
	"testing"
)

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"plain/path-1.yaml", "http://127.0.0.1:8000", "with space", "it's", "$HOME", "a;b", "", "tab\there"} {
		q := shellQuote(s)
		out, err := exec.Command("sh", "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("sh with %s: %v", q, err)
		}
		if string(out) != s {
			t.Errorf("shellQuote(%q) = %s: the shell reads it as %q", s, q, out)
		}
	}
	if q := shellQuote("plain/path.yaml"); q != "plain/path.yaml" {
		t.Errorf("a plain path is quoted: %s", q)
	}
}
