// Package export gets finished requests safely out of the host: the run
// journal (every finished request, in order, flushed as it goes: the source
// of truth a killed run is re-exported from) and the fan-out to exporter
// plugins behind bounded queues, so a slow exporter never stalls sending.
package export
