// Package wire is where lmbench's plugin protocol meets gRPC, and the only
// package that imports the generated protobuf code: the conversions
// between package protocol's Go types and the wire messages (both
// directions), the gRPC client and server of both services, the go-plugin
// handshake and adapters, and the message limits. The host (core/plugin),
// the SDK's Serve and sdktest all use it, so both halves of the wire live
// in one place.
//
// Plugin authors never need this package; it follows the protocol's
// compatibility rules, not the author API's. A plugin in another language
// implements the gRPC services in sdk/proto and the handshake described in
// docs/plugins.md.
package wire

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// The cookie only tells a binary it was started by lmbench (it prints a
// friendly message when run by hand). It is not a security feature.
// These values must never change.
const (
	CookieKey   = "LMBENCH_PLUGIN"
	CookieValue = "9c1b7e5a4f2d48b0a3e6c8d1f7b2a905"
)

// SupportedMajors lists the protocol majors this SDK (and a host built
// with it) speaks.
var SupportedMajors = []int{protocol.Major}

// SDKVersion identifies the SDK a plugin was built with (PluginInfo's
// SDKVersion): the sdk module's version when the build records one (a
// plugin built against a released sdk), else 0.<protocol minor>.0-devel,
// so SDKs of different protocol revisions never report the same.
var SDKVersion = sdkVersion(debug.ReadBuildInfo())

// sdkModule is the SDK's module path.
const sdkModule = "github.com/lmbench/lmbench/sdk"

func sdkVersion(bi *debug.BuildInfo, ok bool) string {
	if ok {
		mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
		for _, m := range mods {
			if m.Path != sdkModule {
				continue
			}
			if m.Replace != nil {
				m = m.Replace
			}
			if v := m.Version; v != "" && v != "(devel)" {
				return strings.TrimPrefix(v, "v")
			}
		}
	}
	return fmt.Sprintf("0.%d.0-devel", protocol.Minor)
}

// Handshake returns the go-plugin handshake for protocol major v.
func Handshake(v int) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(v),
		MagicCookieKey:   CookieKey,
		MagicCookieValue: CookieValue,
	}
}

// MaxMessageBytes is the gRPC message limit on both sides. A clear
// ResourceExhausted error is better than an OOM kill; both sides also cut
// their batches well below it (BatchBytes).
const MaxMessageBytes = 256 << 20

// BatchBytes is the size both sides aim at for one call's payload: the
// host's deliveries of results and exporter batches, the SDK's Step
// answers (split over several Steps when larger).
const BatchBytes = 8 << 20

// WorkloadPlugin adapts the workload service to go-plugin.
type WorkloadPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl protocol.WorkloadService // plugin side only
}

var _ plugin.GRPCPlugin = (*WorkloadPlugin)(nil)

func (p *WorkloadPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	RegisterWorkload(s, p.Impl)
	return nil
}

// GRPCClient returns a protocol.WorkloadService.
func (p *WorkloadPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return WorkloadClient(c), nil
}

// ExporterPlugin adapts the exporter service to go-plugin.
type ExporterPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl protocol.ExporterService // plugin side only
}

var _ plugin.GRPCPlugin = (*ExporterPlugin)(nil)

func (p *ExporterPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	RegisterExporter(s, p.Impl)
	return nil
}

// GRPCClient returns a protocol.ExporterService.
func (p *ExporterPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return ExporterClient(c), nil
}

// HostPlugins is the VersionedPlugins map the host offers: every major it
// speaks, each with both kinds.
func HostPlugins() map[int]plugin.PluginSet {
	m := map[int]plugin.PluginSet{}
	for _, v := range SupportedMajors {
		m[v] = plugin.PluginSet{
			protocol.WorkloadKind: &WorkloadPlugin{},
			protocol.ExporterKind: &ExporterPlugin{},
		}
	}
	return m
}

// GRPCServerOptions raises the message limits (the go-plugin default server
// keeps gRPC's 4 MiB receive limit, which large batches exceed).
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
	}
}

// GRPCDialOptions raises the host side's limits to match.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageBytes),
		grpc.MaxCallSendMsgSize(MaxMessageBytes),
	)}
}
