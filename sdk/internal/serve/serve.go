// Package serve is what runs inside a plugin process: the command-line
// answers that work without a host (describe, version, binary-name), the
// stderr logger in go-plugin's hclog JSON shape, the parent watchdog, and
// go-plugin's Serve with lmbench's handshake and message limits.
package serve

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// Logger returns the plugin's logger. It writes to the process's real
// stderr (captured now, before go-plugin swaps os.Stderr for a pipe the host
// drops) in hclog's JSON shape, so the host re-logs each line at its level.
// It changes zerolog's global field names: that is fine in a plugin process
// and must never happen in the host.
func Logger(stderr io.Writer) zerolog.Logger {
	zerolog.LevelFieldName = "@level"
	zerolog.MessageFieldName = "@message"
	zerolog.TimestampFieldName = "@timestamp"
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000000Z07:00"
	level := zerolog.InfoLevel
	if l, err := zerolog.ParseLevel(os.Getenv("LMBENCH_PLUGIN_LOG_LEVEL")); err == nil && l != zerolog.NoLevel {
		level = l
	}
	return zerolog.New(stderr).Level(level).With().Timestamp().Logger()
}

// Params describes the plugin being served.
type Params struct {
	Kind    string // protocol.WorkloadKind or protocol.ExporterKind
	Name    string
	Version string
	// Describe returns the plugin's description (what `describe` prints).
	Describe func() (any, error)
	Plugin   plugin.Plugin
	// Major overrides the protocol major (tests of version mismatch only).
	Major int
}

// major is the protocol major served: protocol.Major unless overridden.
func (p Params) major() int {
	if p.Major != 0 {
		return p.Major
	}
	return protocol.Major
}

// Main serves the plugin, or answers a subcommand when run by hand. It
// returns the process exit code.
func Main(p Params, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "describe":
			msg, err := p.Describe()
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			b, err := wire.DescribeJSON(msg)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			fmt.Fprintln(stdout, string(b))
			return 0
		case "version":
			fmt.Fprintf(stdout, "%s %s (lmbench %s plugin, protocol v%d.%d, sdk %s)\n",
				p.Name, p.Version, p.Kind, p.major(), protocol.Minor, wire.SDKVersion)
			return 0
		case "binary-name":
			fmt.Fprintf(stdout, "lmbench-%s-%s\n", p.Kind, p.Name)
			return 0
		}
	}
	if os.Getenv(wire.CookieKey) != wire.CookieValue {
		fmt.Fprintf(stderr, "This is the lmbench %s plugin %q; lmbench starts it for you:\n"+
			"  lmbench run --%s %s   (or --%s-plugin %s)\n"+
			"Run it by hand with: describe | version | binary-name\n", p.Kind, p.Name, p.Kind, p.Name, p.Kind, os.Args[0])
		return 1
	}
	go watchParent(os.Getppid())
	major := p.major()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake(major),
		VersionedPlugins: map[int]plugin.PluginSet{major: {p.Kind: p.Plugin}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, wire.GRPCServerOptions()...)...)
		},
		// go-plugin's own messages, in the JSON shape the host parses.
		Logger: hclog.New(&hclog.LoggerOptions{Name: p.Name, Output: stderr, Level: hclog.Warn, JSONFormat: true}),
	})
	return 0
}

// watchParent exits when the host dies: go-plugin children otherwise keep
// running until they happen to write to a closed pipe. Pdeathsig is no use
// here (it fires when the creating thread exits, not the process).
func watchParent(ppid int) {
	for range time.Tick(time.Second) {
		if os.Getppid() != ppid {
			os.Exit(3)
		}
	}
}

// Info is the PluginInfo every plugin of this SDK reports.
func Info(kind, name, version, summary, prefix string, caps []string) protocol.PluginInfo {
	return protocol.PluginInfo{Kind: kind, Name: name, Version: version, Summary: summary, Prefix: prefix,
		ProtocolMinor: protocol.Minor, Capabilities: caps, SDKVersion: wire.SDKVersion}
}
