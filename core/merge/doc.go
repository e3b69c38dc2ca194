// Package merge writes runs from journals rather than from an engine:
// Merge rebuilds one run from the shards of a sharded run (found in
// directories, journal files or object storage, waited for until each is
// complete), checked to be one run's, their timestamps moved onto the
// barrier's clock, every statistic computed from all their records;
// Combine sends several journals through exporters as one file, each
// part's records tagged (a sweep's Parquet); Reexport sends one journal
// through exporters again (lmbench export). A journal with no summary (a
// killed run's) gets one computed from its records (ReadJournal). Upload
// puts a run's files in object storage, where a merge finds them.
//
// The exporters come configured by the caller (Exporters; core/pluginset's
// Exporters is one), so this package never starts plugins itself.
package merge
