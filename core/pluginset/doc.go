// Package pluginset is the plugins of one lmbench command: [Plugins]
// finds, starts and describes each workload and exporter once (a name or
// a path; a plugin missing or of the wrong kind is a config.UsageError),
// negotiates the capabilities, collects the options of the installed
// plugins not in use ([Plugins.Elsewhere]) and stops every one at Close.
// [Configured] and [Exporters] are exporters ready for a run, or for one
// written from journals (core/merge); [FieldErrors] names the flag each
// of a plugin's Configure errors came from.
package pluginset
