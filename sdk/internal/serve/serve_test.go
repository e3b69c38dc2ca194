package serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/lmbench/lmbench/sdk/handshake"
	"github.com/lmbench/lmbench/sdk/internal/serve"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
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
		Kind: handshake.WorkloadKind, Name: def.Name, Version: def.Version,
		Describe: func() (proto.Message, error) {
			return srv.Describe(context.Background(), &workloadv1.DescribeRequest{})
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
	var got workloadv1.DescribeResponse
	if err := protojson.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("describe output is not a DescribeResponse: %v\n%s", err, stdout.String())
	}
	want, err := params().Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, &got, protocmp.Transform()); d != "" {
		t.Errorf("describe (-want +got):\n%s", d)
	}
	if got.GetInfo().GetName() != "fixed-prefix" || got.GetInfo().GetPrefix() != "fp" {
		t.Errorf("info = %v", got.GetInfo())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
}

func TestMainDescribeError(t *testing.T) {
	t.Parallel()
	p := params()
	p.Describe = func() (proto.Message, error) { return nil, errors.New("invalid options struct") }
	var stdout, stderr bytes.Buffer
	if code := serve.Main(p, []string{"describe"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stdout.Len() > 0 || !strings.Contains(stderr.String(), "invalid options struct") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestMainSubcommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"version"}, fmt.Sprintf("fixed-prefix 0.3.0 (lmbench workload plugin, protocol v%d.%d, sdk %s)\n",
			handshake.ProtocolMajor, handshake.ProtocolMinor, handshake.SDKVersion)},
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
	p.Kind, p.Name = handshake.ExporterKind, "csv"
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
	t.Setenv(handshake.CookieKey, "") // restored after the test
	if err := os.Unsetenv(handshake.CookieKey); err != nil {
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
	t.Setenv(handshake.CookieKey, "not-the-cookie")
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
