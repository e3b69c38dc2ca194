package config

import (
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Found is what preparing a run found out that its recorded
// configuration holds: the model (perhaps detected), tokens per GB
// (perhaps read from /status), the workload and the options it resolved.
type Found struct {
	Model       string
	TokensPerGB int64
	// Workload is the workload's name; Path its binary when it was run
	// by path (--workload-plugin), which the entries then name instead.
	Workload, Path string
	// Resolved are the workload's options as it resolved them (its
	// Configure's answer), by option name.
	Resolved protocol.Values
}

// Entries is the run's portable configuration (spec §6.5), what
// --export-config writes and the journal's header records: no engine URL,
// no LMCache URL, no secrets; the workload's options as it resolved them.
// The limits, the percentiles and the load options appear only when set,
// so a file replays them and the defaults stay the defaults of the
// version that reads it.
func (s *Spec) Entries(f Found) []Entry {
	v := s.values
	out := []Entry{{Key: keyModel, Value: f.Model}}
	if s.ServedModel != "" {
		out = append(out, Entry{Key: keyServedModel, Value: s.ServedModel})
	}
	if f.Path != "" {
		out = append(out, Entry{Key: KeyWorkloadPlugin, Value: f.Path})
	} else {
		out = append(out, Entry{Key: KeyWorkload, Value: f.Workload})
	}
	out = append(out,
		Entry{Key: KeyKVVolume, Value: s.KVCacheVolumeGB},
		Entry{Key: KeyTokensPerGB, Value: f.TokensPerGB},
	)
	out = append(out, s.workloadEntries(f)...)
	out = append(out, Entry{Key: keySeed, Value: s.Seed})
	if v.UserSet(keyTokenizer) { // a run counted in words and one in a file's tokens are not alike
		out = append(out, Entry{Key: keyTokenizer, Value: s.Tokenizer})
	}
	for _, o := range LimitOptions() {
		if v.UserSet(o.Key) {
			out = append(out, Entry{Key: o.Key, Value: v.Get(o.Key)})
		}
	}
	if v.UserSet(keyPercentiles) {
		out = append(out, Entry{Key: keyPercentiles, Value: stats.FormatPercentiles(s.Percentiles)})
	}
	out = append(out, s.loadEntries()...)
	if s.Output.RecordOutputs {
		// Recorded, so a reader of the run knows its files hold the answers.
		out = append(out, Entry{Key: keyRecordOutputs, Value: true})
	}
	if s.Output.RecordLogprobs > 0 {
		out = append(out, Entry{Key: keyRecordLogprobs, Value: int64(s.Output.RecordLogprobs)})
	}
	return out
}

// workloadEntries are the workload's options, each as the workload
// resolved it when it said, else as configured.
func (s *Spec) workloadEntries(f Found) []Entry {
	var out []Entry
	for _, o := range s.values.reg.Owned(f.Workload) {
		val := s.values.Get(o.Key)
		if rv, ok := f.Resolved[o.Name]; ok {
			if x, err := o.Parse(Format(rv)); err == nil {
				val = x
			}
			if n, ok := rv.(int64); ok && o.Type == protocol.OptionDuration {
				val = time.Duration(n)
			}
		}
		if val != nil {
			out = append(out, Entry{Key: o.Key, Value: val})
		}
	}
	return out
}

// loadEntries are the load options, each only when set: the summary (at
// the run's end and on re-export) reads the SLO and the cap from there.
func (s *Spec) loadEntries() []Entry {
	var out []Entry
	if s.Load.MaxConcurrency > 0 {
		out = append(out, Entry{Key: keyMaxConcurrency, Value: int64(s.Load.MaxConcurrency)})
	}
	if s.Load.IgnoreEOS {
		out = append(out, Entry{Key: keyIgnoreEOS, Value: true})
	}

	if s.Load.SLO.Set() {
		out = append(out, Entry{Key: keySLO, Value: s.Load.SLO.String()})
	}
	return out
}

// PluginValues returns the values set for a plugin's options above its
// own defaults (the plugin applies those itself), by option name.
func (v *Values) PluginValues(plugin string) protocol.Values {
	out := protocol.Values{}
	for _, o := range v.reg.Owned(plugin) {
		if v.UserSet(o.Key) {
			out[o.Name] = OptionValue(v.Get(o.Key))
		}
	}
	return out
}

// PluginOrigin names where a plugin option's value came from, for its
// errors; prefix is the plugin's flag prefix.
func (v *Values) PluginOrigin(prefix string) func(option string) string {
	return func(name string) string {
		return v.Origin(strings.ReplaceAll(prefix+"_"+name, "-", "_"))
	}
}

// OutputEntries are the output options the user set and those of the
// named exporters, which --export-config writes beside Entries so a
// replay writes the same files: never recorded in a journal (a shard's
// directory is its own, and its configuration must match the other
// shards').
func (s *Spec) OutputEntries(exporters ...string) []Entry {
	var out []Entry
	for _, k := range []string{KeyOutputDir, KeyJSON, keyNoCSV} {
		if s.values.UserSet(k) {
			out = append(out, Entry{Key: k, Value: s.values.Get(k)})
		}
	}
	for _, e := range exporters {
		for _, o := range s.values.reg.Owned(e) {
			if s.values.UserSet(o.Key) {
				out = append(out, Entry{Key: o.Key, Value: s.values.Get(o.Key)})
			}
		}
	}
	return out
}
