package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// Every subcommand is declared once, in commands: lmbench help lists each
// one with a usage line, completion offers each name, and each with
// flags answers --help with its text and its flags, exit 0.
func TestCommandTable(t *testing.T) {
	var help bytes.Buffer
	if code := realMain([]string{"help"}, strings.NewReader(""), &help, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("lmbench help: exit %d", code)
	}
	offered := complete([]string{""})
	for _, c := range commands {
		if c.Hidden {
			if slices.Contains(offered, c.Name) || strings.Contains(help.String(), c.Name) {
				t.Errorf("%s is hidden but listed or completed", c.Name)
			}
			continue
		}
		if !slices.Contains(offered, c.Name) {
			t.Errorf("completion does not offer %s", c.Name)
		}
		if c.Usage != "" && !strings.Contains(help.String(), "\n  lmbench "+c.Usage) {
			t.Errorf("lmbench help lacks %s's line %q", c.Name, c.Usage)
		}
		if c.Flags == nil || c.Name == "export" { // export's help loads its exporters (e2e)
			continue
		}
		var stdout, stderr bytes.Buffer
		if code := realMain([]string{c.Name, "--help"}, strings.NewReader(""), &stdout, &stderr); code != exitOK || stderr.Len() > 0 {
			t.Errorf("%s --help: exit %d, stderr %q", c.Name, code, stderr.String())
		}
		if out := stdout.String(); !strings.HasPrefix(out, c.Help) || !strings.Contains(out, "  -h, --help") {
			t.Errorf("%s --help does not print its help and flags:\n%s", c.Name, out)
		}
	}
}

// A usage error exits 2 and lists the commands after it, but for the
// commands whose errors say where their help is (run, sweep, sim); other
// errors exit 1 without the list. The settings checked are the ones
// parsed.
func TestUsageErrorHint(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args     []string
		code     int
		listed   bool
		inStderr string
	}{
		{[]string{"nope"}, exitUsage, true, `unknown command "nope"`},
		{[]string{"compare", "one"}, exitUsage, true, "compare needs two runs or more"},
		{[]string{"barrier", "--shards", "0"}, exitUsage, true, "--shards 0: expected the number of shards"},
		{[]string{"barrier", "--shards", "2", "extra"}, exitUsage, true, `unexpected argument "extra"`},
		{[]string{"barrier", "--shards", "1", "--listen", "256.0.0.1:x"}, exitFailed, false, "--listen 256.0.0.1:x: "},
		{[]string{"calibrate", "--repeat", "0", "--journal", "j"}, exitUsage, true, "--repeat: must be >= 1, got 0"},
		{[]string{"calibrate", "--journal", dir}, exitFailed, false, "is a directory"},
		{[]string{"sim", "--nope"}, exitUsage, false, "unknown flag: --nope"},
	} {
		var stderr bytes.Buffer
		code := realMain(c.args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.inStderr) {
			t.Errorf("%q: exit %d (want %d), stderr %q", c.args, code, c.code, stderr.String())
		}
		if listed := strings.Contains(stderr.String(), "\nUsage:\n"); listed != c.listed {
			t.Errorf("%q: commands listed %v, want %v", c.args, listed, c.listed)
		}
	}
}
