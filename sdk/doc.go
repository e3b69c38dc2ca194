// Package sdk is the lmbench plugin SDK: everything a workload or exporter
// plugin imports. This package itself is empty; start from the packages
// below.
//
// # Write a plugin in 5 minutes
//
// A plugin is a Go program in its own module that requires only this one.
// Until the SDK module is published, require it through a replace
// directive pointing at a checkout of lmbench (docs/plugins.md, the
// author's guide, has every step):
//
//	go mod init example.com/lmbench-fixed-prefix
//	go mod edit -require=github.com/lmbench/lmbench/sdk@v0.0.0 \
//	            -replace=github.com/lmbench/lmbench/sdk=$HOME/src/lmbench/sdk
//	go mod tidy
//
// Its main.go declares an options struct, a Definition and a main that
// calls Serve. sdk/examples/fixedprefix is a complete workload (about 50
// lines) sending N chat requests at a target rate, all sharing one
// registered prefix:
//
//	type Options struct {
//		Requests     int     `opt:"requests" help:"Requests to send." min:"1"`
//		QPS          float64 `opt:"qps" help:"Target request rate." min:"0.001"`
//		PrefixTokens int     `opt:"prefix-tokens" help:"Words in the shared prefix." min:"1"`
//	}
//
//	var Definition = workload.Definition[Options]{
//		Name: "fixed-prefix", Prefix: "fp", Summary: "N chat requests at a fixed rate sharing one prefix",
//		Defaults: Options{Requests: 100, QPS: 2, PrefixTokens: 1000},
//		New:      newFixed, // returns a workload.Workload: Step and OnFinished
//	}
//
//	func main() { workload.Serve(Definition) }
//
// Test it in-process, with no host and no subprocess (see package sdktest):
//
//	func TestContract(t *testing.T) {
//		sdktest.CheckWorkload(t, Definition, sdktest.Options{Options: map[string]any{"requests": 5}})
//	}
//
// Then build it under its canonical name and put it where lmbench looks
// (a directory of LMBENCH_PLUGIN_PATH, next to the lmbench binary, or the
// user plugin directory), or run it by path with --workload-plugin:
//
//	go build -o lmbench-workload-fixed-prefix .
//	./lmbench-workload-fixed-prefix describe      # the schema lmbench will see
//	lmbench run --workload fixed-prefix --fp-qps 4
//
// Every option becomes a flag (--fp-qps), a config key, an environment
// variable and a field in the interactive form, all from the struct tags.
//
// # Packages
//
//   - workload: Definition, the Workload interface, requests, Serve.
//   - exporter: Definition, the Exporter interface, records, Serve.
//   - option: the struct tags (opt, help, label, min, max, enum, group,
//     advanced), Validate and FieldError.
//   - sdktest: in-process runs, transcripts and the contract checkers
//     CheckWorkload and CheckExporter.
//   - pyrand, pyrepr: CPython-exact random numbers and float formatting,
//     for plugins that must reproduce the original Python tool.
//   - pseudoword: the original's deterministic pseudo-word vocabulary.
//
// Shared with the lmbench host, and not needed by plugin authors:
// protocol (the protocol's Go types and request rules), host/runloop (the
// one interpreter of the protocol, which both the host and sdktest run;
// plugins never import it, and make lint checks that) and wire (gRPC and
// the handshake). Non-Go plugins implement the gRPC
// services in sdk/proto directly (docs/plugins.md, "The wire contract").
package sdk
