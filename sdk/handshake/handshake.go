// Package handshake holds the constants host and plugins must agree on
// before any RPC: the go-plugin cookie, the plugin-set names and the
// protocol versions. The host (core/plugin) and the SDK (Serve) both import
// it, so the two sides can never drift apart.
package handshake

import "github.com/hashicorp/go-plugin"

// The cookie only tells a binary it was started by lmbench (it prints a
// friendly message when run by hand). It is not a security feature.
// These values must never change.
const (
	CookieKey   = "LMBENCH_PLUGIN"
	CookieValue = "9c1b7e5a4f2d48b0a3e6c8d1f7b2a905"
)

// Plugin-set keys under which the two kinds are dispensed.
const (
	WorkloadKind = "workload"
	ExporterKind = "exporter"
)

// ProtocolMajor is the go-plugin protocol version and the "v1" in the proto
// package paths. ProtocolMinor grows with every additive change.
const (
	ProtocolMajor = 1
	ProtocolMinor = 0
)

// SupportedMajors lists the majors this SDK (and the host built with it) speaks.
var SupportedMajors = []int{ProtocolMajor}

// Config returns the go-plugin handshake for protocol major v.
func Config(v int) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(v),
		MagicCookieKey:   CookieKey,
		MagicCookieValue: CookieValue,
	}
}

// MaxMessageBytes is the gRPC message limit on both sides. A clear
// ResourceExhausted error is better than an OOM kill; the host also caps
// each batch it sends well below this (BatchBytes).
const MaxMessageBytes = 256 << 20

// BatchBytes caps the payload of one OnFinished or Write call.
const BatchBytes = 8 << 20

// SDKVersion is reported in PluginInfo.sdk_version.
const SDKVersion = "0.1.0"
