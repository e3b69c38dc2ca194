package invocation

import (
	"os/exec"
	"testing"
)

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"plain/path-1.yaml", "http://127.0.0.1:8000", "with space", "it's", "$HOME", "a;b", "", "tab\there"} {
		q := ShellQuote(s)
		out, err := exec.Command("sh", "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("sh with %s: %v", q, err)
		}
		if string(out) != s {
			t.Errorf("ShellQuote(%q) = %s: the shell reads it as %q", s, q, out)
		}
	}
	if q := ShellQuote("plain/path.yaml"); q != "plain/path.yaml" {
		t.Errorf("a plain path is quoted: %s", q)
	}
}
