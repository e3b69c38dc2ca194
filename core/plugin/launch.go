package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lmbench/lmbench/sdk/host/fault"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// StartTimeout bounds the plugin handshake.
const StartTimeout = 10 * time.Second

// envAllow is what a plugin inherits from the host's environment. Nothing
// else crosses: in particular no API keys (OPENAI_API_KEY stays in the host).
var envAllow = []string{"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "TZ", "USER",
	"SYSTEMROOT", "XDG_DATA_HOME", "XDG_CACHE_HOME", "GOCOVERDIR"}

func pluginEnv(logLevel zerolog.Level) []string {
	var env []string
	for _, k := range envAllow {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "LMBENCH_PLUGIN_LOG_LEVEL="+logLevel.String())
}

// Client is one running plugin process.
type Client struct {
	Kind string
	Path string
	Name string // for logs: the binary's base name until Describe tells the canonical name

	gp     *goplugin.Client
	stderr *ring
	raw    any
	once   sync.Once
	// logName is the name plugin log lines carry; SetName updates it
	// while the plugin may already be logging.
	logName atomic.Pointer[string]
	cmd     *exec.Cmd
	log     zerolog.Logger
}

// KillWait is how long Kill waits for a plugin to exit before it kills
// the plugin's whole process group: children a wrapper script started
// keep its pipes open, and go-plugin waits for them.
var KillWait = 5 * time.Second

// Launch starts the plugin binary at path and completes the handshake.
// The returned client must be Killed.
func Launch(kind, path string, log zerolog.Logger) (*Client, error) {
	c := &Client{Kind: kind, Path: path, Name: baseName(path), stderr: newRing(40), log: log}
	first := c.Name // a copy: SetName rewrites c.Name while logs may be read
	c.logName.Store(&first)
	cmd := exec.Command(path)
	cmd.Env = pluginEnv(log.GetLevel())
	withDeathSignal(cmd)
	c.cmd = cmd
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  wire.Handshake(protocol.Major),
		VersionedPlugins: wire.HostPlugins(),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Managed:          true,
		StartTimeout:     StartTimeout,
		Stderr:           c.stderr,
		Logger:           newNamedHCLogger(log, &c.logName),
		// What the plugin writes to stdout or stderr after the handshake
		// (not through its logger) is logged, not lost.
		SyncStdout:      &lineLogger{log: log, name: &c.logName, stream: "stdout"},
		SyncStderr:      &lineLogger{log: log, name: &c.logName, stream: "stderr"},
		GRPCDialOptions: wire.GRPCDialOptions(),
	}
	if sum, err := os.ReadFile(path + ".sha256"); err == nil {
		want, err := hex.DecodeString(strings.Fields(string(sum) + " x")[0])
		if err != nil {
			return nil, fmt.Errorf("%s plugin %s: checksum file %s.sha256 is not hex: %v", kind, path, path, err)
		}
		if !checksumKnown(path, want) { // checksum.go: a binary verified before, unchanged, is not hashed again
			cfg.SecureConfig = &goplugin.SecureConfig{Checksum: want, Hash: sha256.New()} // one per client: Hash keeps state
		}
	}
	c.gp = goplugin.NewClient(cfg)
	var (
		rpc goplugin.ClientProtocol
		err error
	)
	onLaunchThread(func() { rpc, err = c.gp.Client() })
	if err != nil {
		c.Kill()
		return nil, c.startError(err)
	}
	if cfg.SecureConfig != nil {
		rememberChecksum(path, cfg.SecureConfig.Checksum)
	}
	raw, err := rpc.Dispense(kind)
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("%s plugin %s: %w", kind, path, err)
	}
	c.raw = raw
	return c, nil
}

var versionRE = regexp.MustCompile(`Plugin version: (\d+)`)

func (c *Client) startError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "incompatible API version"):
		pv := "unknown"
		if m := versionRE.FindStringSubmatch(msg); m != nil {
			pv = "v" + m[1]
		}
		return fmt.Errorf("%s plugin %s speaks lmbench plugin protocol %s, this lmbench speaks %v: rebuild the plugin against a matching lmbench sdk",
			c.Kind, c.Path, pv, majors())
	case strings.Contains(msg, "checksums did not match"):
		return fmt.Errorf("%s plugin %s: its checksum does not match %s.sha256", c.Kind, c.Path, c.Path)
	case strings.Contains(msg, "Unrecognized remote plugin message"),
		strings.Contains(msg, "plugin exited before we could connect"),
		strings.Contains(msg, "timeout while waiting for plugin to start"):
		tail := c.stderr.String()
		if tail != "" {
			tail = "; its stderr ended with:\n" + indent(tail)
		}
		why := firstLine(msg)
		if strings.TrimSpace(strings.TrimPrefix(why, "Unrecognized remote plugin message:")) == "" {
			why = "it wrote nothing on stdout, where a plugin's first line is its handshake, and exited or closed it"
		}
		return fmt.Errorf("%s is not a working lmbench %s plugin (protocol %v): it did not complete the plugin handshake (%s)%s",
			c.Path, c.Kind, majors(), why, tail)
	}
	return fmt.Errorf("%s plugin %s: %w", c.Kind, c.Path, err)
}

func majors() string {
	var s []string
	for _, m := range wire.SupportedMajors {
		s = append(s, fmt.Sprintf("v%d", m))
	}
	return strings.Join(s, ",")
}

// Workload returns the workload service (nil for an exporter). Its
// errors are raw; Wrap names the plugin in them.
func (c *Client) Workload() protocol.WorkloadService {
	w, _ := c.raw.(protocol.WorkloadService)
	return w
}

// Exporter returns the exporter service (nil for a workload).
func (c *Client) Exporter() protocol.ExporterService {
	e, _ := c.raw.(protocol.ExporterService)
	return e
}

// OtherKind tells, from the error of a first call, whether the binary is
// a plugin of the other kind ("exporter" for a workload client): it then
// answers the other service and not this one. "" otherwise.
func (c *Client) OtherKind(err error) string {
	if status.Code(err) != codes.Unimplemented {
		return ""
	}
	rpc, rerr := c.gp.Client()
	if rerr != nil {
		return ""
	}
	other := protocol.ExporterKind
	if c.Kind == protocol.ExporterKind {
		other = protocol.WorkloadKind
	}
	raw, derr := rpc.Dispense(other)
	if derr != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch svc := raw.(type) {
	case protocol.WorkloadService:
		_, derr = svc.Describe(ctx, protocol.HostInfo{})
	case protocol.ExporterService:
		_, derr = svc.Describe(ctx, protocol.HostInfo{})
	}
	if derr != nil {
		return ""
	}
	return other
}

// lineLogger logs each line a plugin printed outside its logger, as a
// warning naming the plugin and the stream.
type lineLogger struct {
	log    zerolog.Logger
	name   *atomic.Pointer[string]
	stream string
	mu     sync.Mutex
	part   []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range p {
		if b != '\n' {
			if len(l.part) < 4096 {
				l.part = append(l.part, b)
			}
			continue
		}
		l.log.Warn().Str("plugin", *l.name.Load()).Str("stream", l.stream).Str("line", string(l.part)).
			Msg("a plugin printed outside its logger (plugins log through the SDK's logger; stdout is not theirs)")
		l.part = l.part[:0]
	}
	return len(p), nil
}

// Exited reports whether the plugin process has exited.
func (c *Client) Exited() bool { return c.gp != nil && c.gp.Exited() }

// Kill stops the plugin process (graceful gRPC shutdown, then a kill) and
// waits for it. Safe to call more than once.
func (c *Client) Kill() {
	c.once.Do(func() {
		if c.gp == nil {
			return
		}
		done := make(chan struct{})
		go func() { c.gp.Kill(); close(done) }()
		select {
		case <-done:
		case <-time.After(KillWait):
			c.log.Warn().Str("plugin", c.Name).Str("path", c.Path).
				Msgf("%s plugin %s did not exit within %v of being stopped (a process it started still holds its output open?): killing its process group", c.Kind, c.Name, KillWait)
		}
		killGroup(c.cmd) // what it started too: a wrapper script's children
		select {
		case <-done:
		case <-time.After(KillWait):
			c.log.Error().Str("plugin", c.Name).Str("path", c.Path).Msgf("%s plugin %s: its processes did not exit even when killed; leaving them", c.Kind, c.Name)
		}
	})
}

// Pid returns the plugin's process id (0 if unknown).
func (c *Client) Pid() int {
	if c.gp == nil || c.gp.ReattachConfig() == nil {
		return 0
	}
	return c.gp.ReattachConfig().Pid
}

// Wrap turns an RPC error into one that says which plugin failed and, if it
// died, quotes the first line of the end of its stderr (the panic; the
// log has every line) instead of a raw gRPC error.
func (c *Client) Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable || c.Exited() {
		time.Sleep(50 * time.Millisecond) // let the stderr reader catch the last lines
		// The stderr lines are in the log already (plugin=NAME): the
		// error quotes the first, the panic's, so its stack shows once.
		tail := c.stderr.String()
		if first, _, _ := strings.Cut(strings.TrimSpace(tail), "\n"); first != "" {
			tail = fmt.Sprintf(": %s (its stderr, logged above with plugin=%s, has the rest)", first, *c.logName.Load())
		}
		return fmt.Errorf("%s%s", fault.Crashed(c.Kind, c.Name, c.Path, op), tail)
	}
	if _, ok := status.FromError(err); ok {
		// The message is the plugin's own (a wire.RPCError prints it); %w
		// keeps the status and errors.Is working through the wrap.
		return fmt.Errorf("%s plugin %s: %s failed: %w", c.Kind, c.Name, op, err)
	}
	return fmt.Errorf("%s plugin %s: %s failed: %w", c.Kind, c.Name, op, err)
}

// KillAll kills clients in parallel and waits for all.
func KillAll(clients ...*Client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.Kill() }()
	}
	wg.Wait()
}

// Cleanup kills every plugin process this host started (go-plugin's
// managed clients): a backstop for main, deferred once.
func Cleanup() { goplugin.CleanupClients() }

func baseName(path string) string {
	i := strings.LastIndexAny(path, `/\`)
	return path[i+1:]
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// ring keeps the last n lines written to it.
type ring struct {
	mu    sync.Mutex
	n     int
	lines []string
	part  []byte
}

func newRing(n int) *ring { return &ring{n: n} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			r.lines = append(r.lines, string(r.part))
			r.part = r.part[:0]
			if len(r.lines) > r.n {
				r.lines = r.lines[len(r.lines)-r.n:]
			}
			continue
		}
		if len(r.part) < 4096 {
			r.part = append(r.part, b)
		}
	}
	return len(p), nil
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Keep the panic (and what follows) if there is one, else the tail.
	lines := r.lines
	panicked := false
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			lines, panicked = lines[i:], true
			break
		}
	}
	if len(lines) > 20 {
		if panicked {
			lines = lines[:20] // the panic and the top of its trace
		} else {
			lines = lines[len(lines)-20:] // the tail
		}
	}
	return strings.Join(lines, "\n")
}

// newNamedHCLogger routes go-plugin's logging (including each plugin
// stderr line it parsed, with the plugin's level) into zerolog. Lines carry
// the name *name holds when they are logged: Client.SetName changes it once
// Describe told the canonical name.
func newNamedHCLogger(log zerolog.Logger, name *atomic.Pointer[string]) hclog.Logger {
	l := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "plugin", Output: discard{}, Level: hclog.Trace})
	l.RegisterSink(&sink{log: log, name: name})
	return l
}

// killedExit says go-plugin is logging the exit of a process killed by
// SIGKILL: lmbench's own doing (a failed handshake, the end of a run),
// whose error says what went wrong; a plugin that crashes exits otherwise.
func killedExit(msg string, args []any) bool {
	if msg != "plugin process exited" {
		return false
	}
	for _, a := range args {
		if fmt.Sprint(a) == "signal: killed" {
			return true
		}
	}
	return false
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type sink struct {
	log  zerolog.Logger
	name *atomic.Pointer[string]
}

func (s *sink) Accept(name string, level hclog.Level, msg string, args ...any) {
	// go-plugin's own lifecycle messages come from the root logger; lines
	// the plugin logged come from a child named after the binary.
	if name == "plugin" && (level < hclog.Error || killedExit(msg, args)) {
		level = hclog.Debug
	}
	var ev *zerolog.Event
	switch level {
	case hclog.Trace:
		ev = s.log.Trace()
	case hclog.Debug:
		ev = s.log.Debug()
	case hclog.Info:
		ev = s.log.Info()
	case hclog.Warn:
		ev = s.log.Warn()
	case hclog.Error:
		ev = s.log.Error()
	default:
		ev = s.log.Debug()
	}
	if !ev.Enabled() {
		return
	}
	ev = ev.Str("plugin", *s.name.Load())
	for i := 0; i+1 < len(args); i += 2 {
		k, _ := args[i].(string)
		if k == "" || k == "timestamp" || k == "plugin" {
			continue
		}
		if err, ok := args[i+1].(error); ok {
			// Marshalled as an interface an error is usually "{}".
			ev = ev.AnErr(k, err)
			continue
		}
		ev = ev.Interface(k, args[i+1])
	}
	ev.Msg(msg)
}

// SetName sets the name used in logs and errors (the canonical name from Describe).
func (c *Client) SetName(n string) {
	c.Name = n
	c.logName.Store(&n)
}
