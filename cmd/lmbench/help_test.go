package main

import (
	"bytes"
	"strings"
	"testing"
)

// lmbench run --help puts the built-in engine's --sim-* flags in their own
// section, so their long names do not squeeze the general flags' help
// into a narrow column.
func TestRunHelpSectionsSimFlags(t *testing.T) {
	needBinaries(t)
	t.Setenv("LMBENCH_PLUGIN_PATH", binDir)
	for _, args := range [][]string{{"--help"}, {"--workload", "long-doc-qa", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code, err := cmdRun(args, strings.NewReader(""), &stdout, &stderr); code != exitOK || err != nil {
			t.Fatalf("%q: code %d err %v\n%s", args, code, err, stderr.String())
		}
		out := stdout.String()
		general, engine, ok := strings.Cut(out, "\nBuilt-in engine (")
		if !ok {
			t.Fatalf("%q: no built-in engine section:\n%s", args, out)
		}
		if strings.Contains(general, "--sim-") || !strings.Contains(engine, "--sim-time-scale") {
			t.Errorf("%q: --sim-* flags not all in their section", args)
		}
		for _, line := range strings.Split(general, "\n") {
			if strings.HasPrefix(line, "      --seed int ") {
				if col := strings.Index(line, "Random seed."); col > 40 {
					t.Errorf("%q: general help starts at column %d: %q", args, col, line)
				}
			}
		}
		if !strings.Contains(general, "Random seed.") {
			t.Errorf("%q: no --seed in the general flags", args)
		}
	}
}
