// Package export feeds finished requests to the exporter plugins behind
// a bounded queue per exporter, so a slow exporter never stalls the
// sender (the journal, in package record, already has every record).
package export
