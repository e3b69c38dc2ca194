package config

import (
	"slices"
	"strings"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// Owner names a plugin that declares an option.
type Owner struct {
	Kind   string // "workload" or "exporter"
	Plugin string // the plugin's name: "multi-round-chat"
}

// Elsewhere holds the options of installed plugins that a run did not
// select. A config-file key or LMBENCH_* variable found here is meant for
// another workload (people keep one file for several) and is ignored with
// a warning rather than rejected as a typo.
type Elsewhere struct {
	byKey map[string]Owner
	byEnv map[string]Owner
}

// NewElsewhere returns an empty set.
func NewElsewhere() *Elsewhere {
	return &Elsewhere{byKey: map[string]Owner{}, byEnv: map[string]Owner{}}
}

// AddPlugin records the options of a plugin of kind, under the same
// names a Registry would give them (key <prefix>_<option>, variable
// LMBENCH_<PREFIX>_<OPTION>). A key declared by two plugins keeps the
// first (plugins are added in discovery order).
func (e *Elsewhere) AddPlugin(kind, name, prefix string, specs []protocol.OptionSpec) {
	if prefix == "" {
		return
	}
	for _, sp := range specs {
		key := strings.ReplaceAll(prefix+"_"+sp.Name, "-", "_")
		env := EnvPrefix + strings.ToUpper(key)
		if _, ok := e.byKey[key]; !ok {
			e.byKey[key] = Owner{Kind: kind, Plugin: name}
		}
		if _, ok := e.byEnv[env]; !ok {
			e.byEnv[env] = Owner{Kind: kind, Plugin: name}
		}
	}
}

// Key returns the plugin that declares config key.
func (e *Elsewhere) Key(key string) (Owner, bool) {
	if e == nil {
		return Owner{}, false
	}
	o, ok := e.byKey[key]
	return o, ok
}

// Env returns the plugin that declares the option environment variable name sets.
func (e *Elsewhere) Env(name string) (Owner, bool) {
	if e == nil {
		return Owner{}, false
	}
	o, ok := e.byEnv[name]
	return o, ok
}

// Suggest returns the key closest to key (as Registry.Suggest) and its
// owner, or "".
func (e *Elsewhere) Suggest(key string) (string, Owner) {
	if e == nil {
		return "", Owner{}
	}
	keys := make([]string, 0, len(e.byKey))
	for k := range e.byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c := Closest(key, keys)
	return c, e.byKey[c]
}

// Ignored is a config-file key or LMBENCH_* variable that sets an option
// of a plugin the run does not use.
type Ignored struct {
	Name  string // the file key ("mrc_qps") or the variable ("LMBENCH_MRC_QPS")
	Env   bool   // Name is an environment variable
	Owner Owner
}
