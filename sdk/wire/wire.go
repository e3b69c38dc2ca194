// Package wire holds the go-plugin adapters for both plugin kinds: the
// plugin side registers a generated gRPC server, the host side gets the
// generated client. Host code (core/plugin), the SDK's Serve and sdktest all
// use these, so both halves of the wire live in one place.
//
// Plugin authors never need this package; it follows the protocol's
// compatibility rules, not the author API's.
package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/handshake"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// WorkloadPlugin adapts a WorkloadService to go-plugin.
type WorkloadPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl workloadv1.WorkloadServiceServer // plugin side only
}

var _ plugin.GRPCPlugin = (*WorkloadPlugin)(nil)

func (p *WorkloadPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	workloadv1.RegisterWorkloadServiceServer(s, p.Impl)
	return nil
}

func (p *WorkloadPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return workloadv1.NewWorkloadServiceClient(c), nil
}

// ExporterPlugin adapts an ExporterService to go-plugin.
type ExporterPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl exporterv1.ExporterServiceServer // plugin side only
}

var _ plugin.GRPCPlugin = (*ExporterPlugin)(nil)

func (p *ExporterPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	exporterv1.RegisterExporterServiceServer(s, p.Impl)
	return nil
}

func (p *ExporterPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return exporterv1.NewExporterServiceClient(c), nil
}

// HostPlugins is the VersionedPlugins map the host offers: every major it
// speaks, each with both kinds.
func HostPlugins() map[int]plugin.PluginSet {
	m := map[int]plugin.PluginSet{}
	for _, v := range handshake.SupportedMajors {
		m[v] = plugin.PluginSet{
			handshake.WorkloadKind: &WorkloadPlugin{},
			handshake.ExporterKind: &ExporterPlugin{},
		}
	}
	return m
}

// GRPCServerOptions raises the message limits (the go-plugin default server
// keeps gRPC's 4 MiB receive limit, which large batches exceed).
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(handshake.MaxMessageBytes),
		grpc.MaxSendMsgSize(handshake.MaxMessageBytes),
	}
}

// GRPCDialOptions raises the host side's limits to match.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(handshake.MaxMessageBytes),
		grpc.MaxCallSendMsgSize(handshake.MaxMessageBytes),
	)}
}
