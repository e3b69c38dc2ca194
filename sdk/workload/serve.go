package workload

import (
	"context"
	"os"

	"github.com/lmbench/lmbench/sdk/internal/serve"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// Serve runs def as a plugin process and exits. Call it from main:
//
//	func main() { workload.Serve(definition) }
//
// Run by hand, the binary answers `describe` (its schema as JSON),
// `version` and `binary-name`.
func Serve[O any](def Definition[O]) {
	os.Exit(serveMain(def, 0))
}

func serveMain[O any](def Definition[O], major int) int {
	stdout, stderr := os.Stdout, os.Stderr // captured before go-plugin replaces them
	srv := NewServer(def, serve.Logger(stderr))
	return serve.Main(serve.Params{
		Kind:    protocol.WorkloadKind,
		Name:    def.Name,
		Version: def.Version,
		Describe: func() (any, error) {
			return srv.Describe(context.Background(), protocol.HostInfo{})
		},
		Plugin: &wire.WorkloadPlugin{Impl: srv},
		Major:  major,
	}, os.Args[1:], stdout, stderr)
}

// ServeWithMajor is Serve speaking another protocol major. It exists for
// testing the host's version-mismatch error; real plugins never call it.
func ServeWithMajor[O any](def Definition[O], major int) { os.Exit(serveMain(def, major)) }
