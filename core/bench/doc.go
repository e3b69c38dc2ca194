// Package bench runs one benchmark: the orchestration of lmbench run.
//
// A run's settings arrive as a config.Spec (core/config builds it from the
// flags, variables and file before anything is contacted). [Prepare] does
// what needs the network: the workload's check-only Configure, the
// built-in engine, the model, tokens per GB, the tokenizer and the
// workload's Configure. [Run] builds the sender, the abort policy, the
// metrics and reset plans and a shard's share from the Spec, and [Execute]
// runs the plan: the journal, the exporters, the run loop (sdk/host/runloop)
// on the real clock through core/dispatch, the observer that turns results
// into records, and the summary and files, whatever way the run ended.
// The plugin processes are core/pluginset's (started, described, stopped).
//
// The concerns it drives live beside it: core/abort (when a run stops
// early), core/kvcache (the cache reset and ledger), core/tokenize,
// core/overhead, core/outdir, core/shard and core/merge. None of them
// imports bench.
package bench
