// Package shard is one process's part of a sharded run (lmbench run
// --shard I/N): the journal's shard block, and how it meets the other
// shards. A
// Coordinator gives the shards their common start, holds the measured
// phase until every shard reached it, and tells the others when one stops
// early; Barrier does so through an lmbench barrier (core/barrier), and
// FixedStart is a start time agreed beforehand on synchronised clocks,
// with no gate.
//
// Start with New, giving the shard and a Coordinator; call Part.Start
// once the engine answered, pass Part.BeforePhase to the run, and
// Part.Leave when the run stops before its measured phase.
package shard
