package sdktest

import (
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/lmbench/lmbench/sdk/wire"
)

// grpcConn serves register's services on a Unix socket with the same
// server and dial options a real plugin process and the host use (the
// 256 MiB message limits included), and returns a client connection.
// Everything is closed when the test ends.
func grpcConn(t testing.TB, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	dir := t.TempDir()
	lis, err := net.Listen("unix", filepath.Join(dir, "plugin.sock"))
	if err != nil {
		t.Fatalf("sdktest: listen: %v", err)
	}
	srv := grpc.NewServer(wire.GRPCServerOptions()...)
	register(srv)
	go srv.Serve(lis)
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, wire.GRPCDialOptions()...)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), opts...)
	if err != nil {
		srv.Stop()
		t.Fatalf("sdktest: dial: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	return conn
}
