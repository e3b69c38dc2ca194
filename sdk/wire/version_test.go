package wire

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// The SDK's version follows what it is: a released sdk module's version,
// else one naming the protocol revision it implements, never a constant
// that outlives a protocol minor.
func TestSDKVersionIdentifiesTheSDK(t *testing.T) {
	t.Parallel()
	devel := fmt.Sprintf("0.%d.0-devel", protocol.Minor)
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, devel},
		{"workspace build", &debug.BuildInfo{Main: debug.Module{Path: "example.com/p", Version: "(devel)"},
			Deps: []*debug.Module{{Path: sdkModule, Version: "(devel)"}}}, true, devel},
		{"released sdk", &debug.BuildInfo{Main: debug.Module{Path: "example.com/p"},
			Deps: []*debug.Module{{Path: "google.golang.org/grpc", Version: "v1.85.0"}, {Path: sdkModule, Version: "v0.4.2"}}}, true, "0.4.2"},
		{"replaced by a local copy", &debug.BuildInfo{Deps: []*debug.Module{{Path: sdkModule, Version: "v0.4.2",
			Replace: &debug.Module{Path: "../sdk"}}}}, true, devel},
	} {
		if got := sdkVersion(c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if SDKVersion == "0.2.0" {
		t.Errorf("SDKVersion is the old constant 0.2.0")
	}
}
