// Package plugin is the host's plugin policy: where plugins are found
// (Discover, Find), how they are started (Launch: handshake, versions,
// environment allowlist, checksums, message limits, start timeout), how
// their logs reach the host's zerolog logger with their levels, and how
// they are stopped. The wire adapters themselves live in sdk/wire.
package plugin
