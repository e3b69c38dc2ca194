package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/protocol"
)

func TestRing(t *testing.T) {
	t.Parallel()
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%s%d\n", prefix, i)
		}
		return b.String()
	}
	tests := []struct {
		name   string
		n      int
		writes []string
		want   string
	}{
		{"empty", 5, nil, ""},
		{"keeps the last n lines", 3, []string{"l1\nl2\nl3\nl4\nl5\n"}, "l3\nl4\nl5"},
		{"lines split across writes are joined", 5, []string{"ab", "c\nd", "e", "f\n"}, "abc\ndef"},
		{"an unterminated last line is not shown", 5, []string{"done\npartial"}, "done"},
		{"empty lines are kept", 5, []string{"a\n\nb\n"}, "a\n\nb"},
		{"from the panic line on", 10, []string{"starting\nready\npanic: boom\n\ngoroutine 1 [running]:\nmain.main()\n"},
			"panic: boom\n\ngoroutine 1 [running]:\nmain.main()"},
		{"fatal error too", 10, []string{"log line\nfatal error: concurrent map writes\ngoroutine 7\n"},
			"fatal error: concurrent map writes\ngoroutine 7"},
		{"the first panic wins", 10, []string{"panic: first\npanic: second\n"}, "panic: first\npanic: second"},
		{"panic trace capped at 20 lines from its start", 40, []string{"x\npanic: boom\n" + lines("frame", 30)},
			"panic: boom\n" + strings.TrimSuffix(lines("frame", 19), "\n")},
		{"no panic: the last 20 lines", 40, []string{lines("line", 35)},
			strings.TrimSuffix(strings.TrimPrefix(lines("line", 35), lines("line", 15)), "\n")},
		{"a mention of panic mid-line is not a panic", 3, []string{"a\nlog: panic: no\nb\nc\n"}, "log: panic: no\nb\nc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRing(tt.n)
			for _, w := range tt.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if diff := cmp.Diff(tt.want, r.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("an endless line is capped", func(t *testing.T) {
		t.Parallel()
		r := newRing(2)
		r.Write(bytes.Repeat([]byte("x"), 10000))
		r.Write([]byte("\n"))
		if got := len(r.String()); got != 4096 {
			t.Errorf("line length %d, want 4096", got)
		}
	})
}

func TestStartErrorMessages(t *testing.T) {
	t.Parallel()
	const path = "/plugins/lmbench-workload-x"
	tests := []struct {
		name   string
		err    error
		stderr string
		want   []string
		not    []string
	}{
		{
			name: "incompatible version",
			err:  errors.New("incompatible API version with plugin. Plugin version: 99, Client versions: [1]"),
			want: []string{path, "protocol v99", "this lmbench speaks v1", "rebuild the plugin"},
		},
		{
			name: "incompatible version without a number",
			err:  errors.New("incompatible API version with plugin."),
			want: []string{path, "protocol unknown"},
		},
		{
			name: "checksum mismatch",
			err:  errors.New("checksums did not match"),
			want: []string{path, "checksum does not match " + path + ".sha256"},
		},
		{
			name:   "exited during handshake, with the panic",
			err:    errors.New("plugin exited before we could connect"),
			stderr: "booting\npanic: nil map\n\ngoroutine 1 [running]:\n",
			want: []string{path + " is not a working lmbench workload plugin", "(plugin exited before we could connect)",
				"its stderr ended with:\n    panic: nil map\n    \n    goroutine 1 [running]:"},
			not: []string{"booting"},
		},
		{
			name: "not a plugin: only the first line of go-plugin's message",
			err:  errors.New("Unrecognized remote plugin message: Usage: foo [flags]\nThis usually means\nthe plugin was not..."),
			want: []string{"is not a working lmbench workload plugin", "(Unrecognized remote plugin message: Usage: foo [flags])"},
			not:  []string{"This usually means", "stderr ended with"},
		},
		{
			name:   "start timeout",
			err:    errors.New("timeout while waiting for plugin to start"),
			stderr: "still loading\n",
			want:   []string{"is not a working lmbench workload plugin", "timeout while waiting", "    still loading"},
		},
		{
			name: "anything else is wrapped",
			err:  fmt.Errorf("fork/exec %s: %w", path, os.ErrPermission),
			want: []string{"workload plugin " + path + ": fork/exec"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{Kind: "workload", Path: path, Name: baseName(path), stderr: newRing(40)}
			c.stderr.Write([]byte(tt.stderr))
			err := c.startError(tt.err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%s", w, err)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error contains %q:\n%s", w, err)
				}
			}
		})
	}
	t.Run("wrapped error keeps its cause", func(t *testing.T) {
		t.Parallel()
		c := &Client{Kind: "exporter", Path: path, stderr: newRing(40)}
		if err := c.startError(os.ErrPermission); !errors.Is(err, os.ErrPermission) {
			t.Errorf("errors.Is(%v, ErrPermission) = false", err)
		}
	})
}

// logLines decodes zerolog's JSON lines.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestSinkLevelsAndFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		hcName string
		level  hclog.Level
		msg    string
		args   []any
		want   map[string]any // nil: nothing logged
	}{
		{
			name: "plugin line keeps its level and fields", hcName: "plugin.lmbench-workload-x", level: hclog.Warn,
			msg: "slow step", args: []any{"step", 3, "phase", "measure", "timestamp", "2025-01-01T00:00:00.000Z"},
			want: map[string]any{"level": "warn", "plugin": "x", "step": 3.0, "phase": "measure", "message": "slow step"},
		},
		{
			name: "plugin error", hcName: "plugin.lmbench-workload-x", level: hclog.Error, msg: "bad",
			want: map[string]any{"level": "error", "plugin": "x", "message": "bad"},
		},
		{
			name: "plugin trace", hcName: "plugin.lmbench-workload-x", level: hclog.Trace, msg: "t",
			want: map[string]any{"level": "trace", "plugin": "x", "message": "t"},
		},
		{
			name: "plugin info", hcName: "plugin.lmbench-workload-x", level: hclog.Info, msg: "i",
			want: map[string]any{"level": "info", "plugin": "x", "message": "i"},
		},
		{
			name: "a plugin cannot rename itself; odd and non-string keys are dropped", hcName: "plugin.lmbench-workload-x",
			level: hclog.Info, msg: "m", args: []any{"plugin", "spoofed", 42, "v", "", "empty", "ok", true, "dangling"},
			want: map[string]any{"level": "info", "plugin": "x", "ok": true, "message": "m"},
		},
		{
			name: "go-plugin lifecycle info becomes debug", hcName: "plugin", level: hclog.Info,
			msg: "plugin process exited", args: []any{"id", 42},
			want: map[string]any{"level": "debug", "plugin": "x", "id": 42.0, "message": "plugin process exited"},
		},
		{
			name: "go-plugin warn becomes debug", hcName: "plugin", level: hclog.Warn, msg: "plugin failed to exit gracefully",
			want: map[string]any{"level": "debug", "plugin": "x", "message": "plugin failed to exit gracefully"},
		},
		{
			name: "go-plugin errors stay errors", hcName: "plugin", level: hclog.Error, msg: "plugin process exited",
			args: []any{"error", "exit status 2"},
			want: map[string]any{"level": "error", "plugin": "x", "error": "exit status 2", "message": "plugin process exited"},
		},
		{
			name: "an error value keeps its text", hcName: "plugin", level: hclog.Debug, msg: "received EOF, stopping recv loop",
			args: []any{"err", fmt.Errorf("recv: %w", io.EOF)},
			want: map[string]any{"level": "debug", "plugin": "x", "err": "recv: EOF", "message": "received EOF, stopping recv loop"},
		},
		{
			name: "unknown level is debug", hcName: "plugin.lmbench-workload-x", level: hclog.NoLevel, msg: "n",
			want: map[string]any{"level": "debug", "plugin": "x", "message": "n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			s := &sink{log: zerolog.New(&buf).Level(zerolog.TraceLevel), name: logName("x")}
			s.Accept(tt.hcName, tt.level, tt.msg, tt.args...)
			got := logLines(t, buf.String())
			if len(got) != 1 {
				t.Fatalf("logged %d lines, want 1: %s", len(got), buf.String())
			}
			if diff := cmp.Diff(tt.want, got[0]); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("below the host's level nothing is written", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		s := &sink{log: zerolog.New(&buf).Level(zerolog.InfoLevel), name: logName("x")}
		s.Accept("plugin", hclog.Info, "starting plugin")            // becomes debug
		s.Accept("plugin.lmbench-workload-x", hclog.Debug, "detail") // stays debug
		if buf.Len() != 0 {
			t.Errorf("logged %q", buf.String())
		}
	})
}

// Through a real hclog logger as go-plugin uses it: the root is "plugin",
// stderr lines come from a child named after the binary.
func TestHCLoggerRoutesThroughSink(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := newNamedHCLogger(zerolog.New(&buf).Level(zerolog.DebugLevel), logName("lmbench-workload-x"))
	l.Info("starting plugin", "path", "/p")
	l.Named("lmbench-workload-x").Warn("from the plugin", "k", "v")
	got := logLines(t, buf.String())
	want := []map[string]any{
		{"level": "debug", "plugin": "lmbench-workload-x", "path": "/p", "message": "starting plugin"},
		{"level": "warn", "plugin": "lmbench-workload-x", "k": "v", "message": "from the plugin"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

// logName holds n as a Client's logName does.
func logName(n string) *atomic.Pointer[string] {
	var p atomic.Pointer[string]
	p.Store(&n)
	return &p
}

// Not parallel: t.Setenv.
func TestPluginEnvAllowlist(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("LMBENCH_PLUGIN_PATH", "/somewhere")
	t.Setenv("HOME", "/home/u")
	t.Setenv("TZ", "UTC")
	env := pluginEnv(zerolog.WarnLevel)
	for _, kv := range env {
		if strings.Contains(kv, "sk-secret") || strings.HasPrefix(kv, "LMBENCH_PLUGIN_PATH=") {
			t.Errorf("plugin environment has %q", kv)
		}
	}
	for _, want := range []string{"HOME=/home/u", "TZ=UTC", "LMBENCH_PLUGIN_LOG_LEVEL=warn"} {
		if !slices.Contains(env, want) {
			t.Errorf("plugin environment lacks %q: %v", want, env)
		}
	}
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Launch against scripts that fail the handshake in each way go-plugin
// reports, so the message mapping is checked against go-plugin's real text.
func TestLaunchHandshakeFailures(t *testing.T) {
	t.Parallel()
	skipOnWindows(t)
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       []string
		not        []string
	}{
		{
			name: "lmbench-workload-future",
			body: "echo '1|99|tcp|127.0.0.1:1|grpc'\nexec sleep 30\n",
			want: []string{filepath.Join(dir, "lmbench-workload-future"), "protocol v99", "this lmbench speaks v1"},
		},
		{
			name: "lmbench-workload-crash",
			body: "echo 'loading config' >&2\necho 'panic: runtime error: index out of range' >&2\necho '' >&2\necho 'goroutine 1 [running]:' >&2\nexit 2\n",
			want: []string{filepath.Join(dir, "lmbench-workload-crash") + " is not a working lmbench workload plugin",
				// go-plugin sees either the exit or the closed stdout first.
				"did not complete the plugin handshake", "    panic: runtime error: index out of range", "    goroutine 1 [running]:"},
			not: []string{"loading config"},
		},
		{
			name: "lmbench-workload-silent", // /bin/true: exits at once, nothing on stdout
			body: "exit 0\n",
			want: []string{"is not a working lmbench workload plugin", "it wrote nothing on stdout, where a plugin's first line is its handshake"},
			not:  []string{"message: )"},
		},
		{
			name: "lmbench-workload-chatty",
			body: "echo 'Usage: chatty [flags]'\nexec sleep 30\n",
			want: []string{"is not a working lmbench workload plugin", "Unrecognized remote plugin message: Usage: chatty [flags]"},
		},
	}
	// Every script written before any starts: a file open for writing
	// while another test forks is "text file busy" to exec.
	paths := map[string]string{}
	for _, tt := range tests {
		paths[tt.name] = script(t, dir, tt.name, tt.body)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := paths[tt.name]
			c, err := Launch("workload", path, zerolog.Nop())
			if err == nil {
				c.Kill()
				t.Fatal("Launch succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%s", w, err)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error contains %q:\n%s", w, err)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for go-plugin's logging goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// buildFixedPrefix builds the SDK's example workload into dir.
func buildFixedPrefix(t *testing.T, dir string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "sdk", "examples", "fixedprefix"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "lmbench-workload-fixed-prefix")
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", src, err, out)
	}
	return bin
}

// A real plugin process: handshake, one RPC, kill; then the checksum
// policy against the same binary.
func TestLaunchRealPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a plugin binary")
	}
	skipOnWindows(t)
	t.Parallel()
	bin := buildFixedPrefix(t, t.TempDir())

	launchAndDescribe := func(t *testing.T, log zerolog.Logger) {
		t.Helper()
		c, err := Launch("workload", bin, log)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Kill()
		if c.Exporter() != nil {
			t.Error("a workload client also answers as an exporter")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d, err := c.Workload().Describe(ctx, Host("test"))
		if err != nil {
			t.Fatal(c.Wrap("Describe", err))
		}
		if got := d.Info.Name; got != "fixed-prefix" {
			t.Errorf("Describe name = %q, want fixed-prefix", got)
		}
		pid := c.Pid()
		if pid == 0 {
			t.Fatal("Pid() = 0 for a running plugin")
		}
		if processGone(pid) || c.Exited() {
			t.Fatalf("plugin process %d is not running", pid)
		}
		c.Kill()
		c.Kill() // safe twice
		if !processGone(pid) {
			t.Errorf("plugin process %d still exists after Kill", pid)
		}
		if !c.Exited() {
			t.Error("Exited() = false after Kill")
		}
	}

	t.Run("describe and kill", func(t *testing.T) {
		var logs syncBuffer
		launchAndDescribe(t, zerolog.New(&logs).Level(zerolog.DebugLevel))
		// go-plugin's own chatter arrives, demoted to debug.
		var starting bool
		for _, l := range logLines(t, logs.String()) {
			if l["message"] == "starting plugin" {
				starting = l["level"] == "debug" && l["plugin"] == "lmbench-workload-fixed-prefix"
			}
		}
		if !starting {
			t.Errorf("no debug-level \"starting plugin\" line in the host log:\n%s", logs.String())
		}
	})

	sum := sha256.Sum256(mustRead(t, bin))
	sumFile := bin + ".sha256"
	t.Run("wrong checksum", func(t *testing.T) {
		t.Cleanup(func() { os.Remove(sumFile) })
		wrong := sha256.Sum256([]byte("some other binary"))
		writeFile(t, sumFile, hex.EncodeToString(wrong[:])+"  lmbench-workload-fixed-prefix\n")
		c, err := Launch("workload", bin, zerolog.Nop())
		if err == nil {
			c.Kill()
			t.Fatal("Launch succeeded with a wrong checksum")
		}
		if !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), bin) {
			t.Errorf("error %q does not mention the checksum and the binary", err)
		}
	})
	t.Run("checksum file not hex", func(t *testing.T) {
		t.Cleanup(func() { os.Remove(sumFile) })
		writeFile(t, sumFile, "not-a-checksum\n")
		c, err := Launch("workload", bin, zerolog.Nop())
		if err == nil {
			c.Kill()
			t.Fatal("Launch succeeded with a garbled checksum file")
		}
		if !strings.Contains(err.Error(), sumFile) || !strings.Contains(err.Error(), "not hex") {
			t.Errorf("error %q does not name the checksum file", err)
		}
	})
	t.Run("right checksum", func(t *testing.T) {
		t.Cleanup(func() { os.Remove(sumFile) })
		writeFile(t, sumFile, hex.EncodeToString(sum[:])+"  lmbench-workload-fixed-prefix\n")
		launchAndDescribe(t, zerolog.Nop())
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The host's view of a real plugin: errors that name it, the other-kind
// probe, and its describe subcommand agreeing with Describe over gRPC.
func TestRealPluginServices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a plugin binary")
	}
	skipOnWindows(t)
	t.Parallel()
	bin := buildFixedPrefix(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := Launch(protocol.WorkloadKind, bin, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	w := c.WorkloadService()
	d, err := w.Describe(ctx, Host("test"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "describe").Output()
	if err != nil {
		t.Fatalf("%s describe: %v", bin, err)
	}
	printed, err := ParseDescribe(out)
	if err != nil {
		t.Fatalf("ParseDescribe(%q): %v", out, err)
	}
	if diff := cmp.Diff(d, printed); diff != "" {
		t.Errorf("describe subcommand vs Describe over gRPC (-rpc +printed):\n%s", diff)
	}
	if d.Info.Name != "fixed-prefix" || d.Info.Prefix != "fp" || len(d.Options) != 3 {
		t.Errorf("description %+v", d)
	}

	// Out of order: the error names the plugin and the call.
	_, err = w.Step(ctx, protocol.StepRequest{Phase: protocol.Measure})
	for _, want := range []string{"workload plugin lmbench-workload-fixed-prefix: Step failed:", "before a successful Configure"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Step before Configure: error %v does not contain %q", err, want)
		}
	}
	if kind := c.OtherKind(err); kind != "" {
		t.Errorf("OtherKind(%v) = %q for a workload's own error, want \"\"", err, kind)
	}
	if kind := c.OtherKind(nil); kind != "" {
		t.Errorf("OtherKind(nil) = %q", kind)
	}
	c.SetName("fixed-prefix")
	err = w.OnFinished(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "workload plugin fixed-prefix: OnFinished failed:") {
		t.Errorf("after SetName: error %v does not use the new name", err)
	}

	// A dead plugin: every call says so, naming the call.
	c.Kill()
	_, err = w.Describe(ctx, Host("test"))
	if err == nil || !strings.Contains(err.Error(), "fixed-prefix ("+bin+") crashed or exited during Describe") {
		t.Errorf("after Kill: error %v", err)
	}

	// The workload binary started as an exporter: its first call fails
	// with Unimplemented, and OtherKind tells what it really is.
	e, err := Launch(protocol.ExporterKind, bin, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Kill()
	if e.Workload() != nil {
		t.Error("an exporter client also answers as a workload")
	}
	_, err = e.Exporter().Describe(ctx, Host("test"))
	if err == nil {
		t.Fatal("a workload answered the exporter service")
	}
	if kind := e.OtherKind(err); kind != protocol.WorkloadKind {
		t.Errorf("OtherKind(%v) = %q, want workload", err, kind)
	}
}

// A wrapper script that starts the plugin as its child (no exec) and never
// completes the handshake: Launch gives up after StartTimeout with the
// handshake message, and the child, which holds the plugin's output open,
// is killed with its process group instead of hanging the host.
func TestLaunchOfAWrapperThatForks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("process groups and /proc: Linux")
	}
	path := script(t, t.TempDir(), "lmbench-workload-wrapper", "sleep 9871\n")
	done := make(chan error, 1)
	go func() {
		c, err := Launch("workload", path, zerolog.Nop())
		for i := 0; i < 3 && err != nil && strings.Contains(err.Error(), "text file busy"); i++ {
			// Another test forked while the script was open for writing.
			time.Sleep(100 * time.Millisecond)
			c, err = Launch("workload", path, zerolog.Nop())
		}
		if err == nil {
			c.Kill()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(StartTimeout + 4*KillWait): // a hang, not a slow machine
		t.Fatal("Launch of a forking wrapper did not return")
	}
	if err == nil || !strings.Contains(err.Error(), path+" is not a working lmbench workload plugin") ||
		!strings.Contains(err.Error(), "did not complete the plugin handshake") {
		t.Fatalf("Launch = %v, want the handshake failure naming %s", err, path)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, _ := os.ReadFile(p); string(b) == "sleep\x009871\x00" {
			t.Errorf("the wrapper's child %s outlived Launch", filepath.Dir(p))
		}
	}
}
