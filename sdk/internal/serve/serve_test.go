package serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
	"github.com/lmbench/lmbench/sdk/workload"
)

type options struct {
	Requests int `opt:"requests" help:"Requests to send." min:"1"`
}

var def = workload.Definition[options]{
	Name: "fixed-prefix", Prefix: "fp", Summary: "a test workload", Version: "0.3.0",
	Defaults: options{Requests: 100},
	New: func(options, workload.Env) (workload.Workload, error) {
		return nil, errors.New("not used")
	},
}

func params() serve.Params {
	srv := workload.NewServer(def, zerolog.Nop())
	return serve.Params{
		Kind: protocol.WorkloadKind, Name: def.Name, Version: def.Version,
		Describe: func() (any, error) {
			return srv.Describe(context.Background(), protocol.HostInfo{})
		},
		Plugin: &wire.WorkloadPlugin{Impl: srv},
	}
}

func TestMainDescribe(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := serve.Main(params(), []string{"describe"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	got, err := wire.ParseDescribeJSON(stdout.Bytes())
	if err != nil {
		t.Fatalf("describe output is not a DescribeResponse: %v\n%s", err, stdout.String())
	}
	want, err := params().Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("describe (-want +got):\n%s", d)
	}
	// The SDK's capabilities, but the tokenizer: this workload does not
	// count tokens.
	caps := slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool {
		// nor does it split its plan, nor score its answers
		return c == protocol.Tokenizer || c == protocol.Sharding || c == protocol.Scores
	})
	wantInfo := protocol.PluginInfo{
		Kind: protocol.WorkloadKind, Name: "fixed-prefix", Version: "0.3.0", Summary: "a test workload", Prefix: "fp",
		ProtocolMinor: protocol.Minor, Capabilities: caps, SDKVersion: wire.SDKVersion,
	}
	if d := cmp.Diff(wantInfo, got.Info); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
}

func TestMainDescribeError(t *testing.T) {
	t.Parallel()
	p := params()
	p.Describe = func() (any, error) { return nil, errors.New("invalid options struct") }
	var stdout, stderr bytes.Buffer
	if code := serve.Main(p, []string{"describe"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stdout.Len() > 0 || !strings.Contains(stderr.String(), "invalid options struct") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// Describe must return a protocol description; anything else is a bug in
// the SDK, reported rather than printed.
func TestMainDescribeNotADescription(t *testing.T) {
	t.Parallel()
	p := params()
	p.Describe = func() (any, error) { return "not a description", nil }
	var stdout, stderr bytes.Buffer
	if code := serve.Main(p, []string{"describe"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stdout.Len() > 0 || !strings.Contains(stderr.String(), "DescribeJSON takes a workload or exporter description") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestMainDescribeExporter(t *testing.T) {
	t.Parallel()
	desc := protocol.ExporterDescription{
		Info:    serve.Info(protocol.ExporterKind, "csv", "1.0.0", "CSV files", "csv", nil),
		Options: []protocol.OptionSpec{{Name: "file", Type: protocol.OptionString, Default: "out.csv", Help: "Output file."}},
	}
	p := params()
	p.Kind, p.Name = protocol.ExporterKind, "csv"
	p.Describe = func() (any, error) { return desc, nil }
	var stdout, stderr bytes.Buffer
	if code := serve.Main(p, []string{"describe"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	got, err := wire.ParseDescribeJSON(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// An exporter's description read as a workload's: the workload fields are zero.
	want := protocol.WorkloadDescription{Info: desc.Info, Options: desc.Options}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("describe (-want +got):\n%s", d)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	got := serve.Info(protocol.WorkloadKind, "w", "1.0", "sum", "p", []string{protocol.ToolCalls})
	want := protocol.PluginInfo{Kind: "workload", Name: "w", Version: "1.0", Summary: "sum", Prefix: "p",
		ProtocolMinor: protocol.Minor, Capabilities: []string{protocol.ToolCalls}, SDKVersion: wire.SDKVersion}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Info (-want +got):\n%s", d)
	}
}

// version names the protocol major the plugin serves, not the SDK's.
func TestVersionNamesTheMajorServed(t *testing.T) {
	t.Parallel()
	p := params()
	p.Major = 99
	var stdout, stderr bytes.Buffer
	if code := serve.Main(p, []string{"version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	if want := fmt.Sprintf("protocol v99.%d,", protocol.Minor); !strings.Contains(stdout.String(), want) {
		t.Errorf("version = %q, want it to say %s", stdout.String(), want)
	}
}

func TestMainSubcommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"version"}, fmt.Sprintf("fixed-prefix 0.3.0 (lmbench workload plugin, protocol v%d.%d, sdk %s)\n",
			protocol.Major, protocol.Minor, wire.SDKVersion)},
		{[]string{"binary-name"}, "lmbench-workload-fixed-prefix\n"},
		{[]string{"binary-name", "ignored"}, "lmbench-workload-fixed-prefix\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := serve.Main(params(), tc.args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, stderr.String())
			}
			if d := cmp.Diff(tc.want, stdout.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
		})
	}
}

func TestMainExporterBinaryName(t *testing.T) {
	t.Parallel()
	p := params()
	p.Kind, p.Name = protocol.ExporterKind, "csv"
	var stdout, stderr bytes.Buffer
	serve.Main(p, []string{"binary-name"}, &stdout, &stderr)
	if got, want := stdout.String(), "lmbench-exporter-csv\n"; got != want {
		t.Errorf("binary-name = %q, want %q", got, want)
	}
}

// Without the cookie the binary was run by hand: it explains itself on
// stderr, prints nothing on stdout and fails. Not parallel: it changes the
// environment.
func TestMainWithoutCookie(t *testing.T) {
	t.Setenv(wire.CookieKey, "") // restored after the test
	if err := os.Unsetenv(wire.CookieKey); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"serve"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		if code := serve.Main(params(), args, &stdout, &stderr); code != 1 {
			t.Errorf("Main(%q) = %d, want 1", args, code)
		}
		if stdout.Len() > 0 {
			t.Errorf("Main(%q) wrote to stdout: %q", args, stdout.String())
		}
		for _, want := range []string{`This is the lmbench workload plugin "fixed-prefix"`, "lmbench run --workload fixed-prefix", "describe | version | binary-name"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("Main(%q) stderr lacks %q:\n%s", args, want, stderr.String())
			}
		}
	}
}

func TestMainWrongCookie(t *testing.T) {
	t.Setenv(wire.CookieKey, "not-the-cookie")
	var stdout, stderr bytes.Buffer
	if code := serve.Main(params(), nil, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestLogger(t *testing.T) {
	// Not parallel: Logger sets zerolog's global field names.
	t.Setenv("LMBENCH_PLUGIN_LOG_LEVEL", "debug")
	var buf bytes.Buffer
	log := serve.Logger(&buf)
	log.Debug().Msg("hello")
	for _, want := range []string{`"@level":"debug"`, `"@message":"hello"`, `"@timestamp":"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log line %q lacks %s", buf.String(), want)
		}
	}
}
