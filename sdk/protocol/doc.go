// Package protocol is lmbench's plugin protocol as Go types: what the host
// and a plugin say to each other, with no gRPC or protobuf in sight. Both
// sides speak it: the host (core) and sdktest drive workloads through it,
// and the SDK's servers answer it. Package wire is the one place where
// these types meet the generated protobuf code, in both directions.
//
// The protocol has a major version (the go-plugin handshake and the v1 in
// the proto package paths) and a minor one that only adds. Additions a peer
// may not have are capabilities: the host announces its own in Describe,
// the plugin answers with its own, and a feature is used only when both
// have it (Negotiate).
//
// Validator is the one set of request rules: the host and sdktest both
// reject, with the same error, a request the other would reject.
package protocol
