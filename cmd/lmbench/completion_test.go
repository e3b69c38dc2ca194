package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestComplete(t *testing.T) {
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{""}, []string{"run", "sweep", "sim", "export", "merge", "barrier", "calibrate", "report", "compare", "fit", "plugins", "probe", "version", "completion", "help"}},
		{[]string{"r"}, []string{"run", "report"}},
		{[]string{"rep"}, []string{"report"}},
		{[]string{"report", "--res"}, []string{"--resamples"}},
		{[]string{"report", "-o", ""}, nil}, // a path
		{[]string{"compare", "--js"}, []string{"--json"}},
		{[]string{"compare", ""}, nil}, // run directories
		{[]string{"e"}, []string{"export"}},
		{[]string{"export", "--jo"}, []string{"--journal"}},
		{[]string{"m"}, []string{"merge"}},
		{[]string{"merge", "--par"}, []string{"--partial"}},
		{[]string{"barrier", "--sh"}, []string{"--shards"}},
		{[]string{"export", "--journal", ""}, nil}, // a path
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"run", "--log-l"}, []string{"--log-level"}},
		{[]string{"run", "--log-level", "d"}, []string{"debug"}},
		{[]string{"run", "--log-format", ""}, []string{"auto", "console", "json"}},
		{[]string{"run", "--config", ""}, nil}, // a path: the shell completes files
		{[]string{"run", "--json", "--no-i"}, []string{"--no-interactive"}},
		{[]string{"run", "--swe"}, nil}, // lmbench sweep's
		{[]string{"sim", "--po"}, []string{"--port"}},
		{[]string{"sim", "--port", ""}, nil}, // a value, not the flags again
		{[]string{"ca"}, []string{"calibrate"}},
		{[]string{"calibrate", "--re"}, []string{"--repeat"}},
		{[]string{"calibrate", "--journal", ""}, nil}, // a path
	}
	for _, c := range cases {
		if got := complete(c.words); !slices.Equal(got, c.want) {
			t.Errorf("complete(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}

// --help on the small subcommands prints their help and exits 0 (it was an
// "unknown argument" usage error).
func TestSmallSubcommandsHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"plugins", "--help"}, []string{"Usage: lmbench plugins", "LMBENCH_PLUGIN_PATH", "shadowed", "Searched now: "}},
		{[]string{"plugins", "-h"}, []string{"Usage: lmbench plugins"}},
		{[]string{"completion", "--help"}, []string{"Usage: lmbench completion bash|zsh|fish", "source <(lmbench completion bash)"}},
		{[]string{"calibrate", "--help"}, []string{"Usage: lmbench calibrate --journal PATH [--repeat N]", "--repeat", "every cost at zero"}},
		{[]string{"report", "--help"}, []string{"Usage: lmbench report DIR|SWEEPDIR...", "--resamples", "self-contained"}},
		{[]string{"compare", "-h"}, []string{"Usage: lmbench compare A B", "--pairs", "beyond noise"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := realMain(c.args, strings.NewReader(""), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%q: output lacks %q:\n%s", c.args, w, stdout.String())
			}
		}
	}
}
