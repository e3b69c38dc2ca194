package config

// Choice is what the first pass over lmbench run's arguments learns
// before the plugins' options are known: the workload (by name or path,
// each with its origin) and the log's level and format.
type Choice struct {
	Workload, WorkloadOrigin string
	Plugin, PluginOrigin     string // --workload-plugin
	LogLevel, LogFormat      string
}

// ReadChoice reads the first pass's Choice.
func ReadChoice(v *Values) Choice {
	return Choice{Workload: v.String(KeyWorkload), WorkloadOrigin: v.Origin(KeyWorkload),
		Plugin: v.String(KeyWorkloadPlugin), PluginOrigin: v.Origin(KeyWorkloadPlugin),
		LogLevel: v.String(KeyLogLevel), LogFormat: v.String(KeyLogFormat)}
}

// Missing lists the required arguments still unset, as flag labels (for
// messages) and config keys (for the guided setup), in the original's
// order (spec §1.3); hasWorkload says a workload was chosen.
func Missing(v *Values, hasWorkload bool) (labels, keys []string) {
	if v.String(KeyEngineURL) == "" {
		labels, keys = append(labels, "--engine-url"), append(keys, KeyEngineURL)
	}
	if !hasWorkload {
		labels, keys = append(labels, "--workload"), append(keys, KeyWorkload)
	}
	if !v.Has(KeyTokensPerGB) && !HasStatusSource(v.String(KeyLMCacheURL), v.String(KeyEngineURL)) {
		labels, keys = append(labels, "--tokens-per-gb-kvcache or --lmcache-url"), append(keys, KeyLMCacheURL, KeyTokensPerGB)
	}
	return labels, keys
}
