package config

import "strings"

// SimProfile is --sim-profile's path when the run's engine is the
// built-in one, "" otherwise: what the run measures is then the twin's
// prediction of the engine the profile was fitted to.
func SimProfile(v *Values) string {
	if u, _ := v.Get(KeyEngineURL).(string); strings.TrimSpace(u) != BuiltinEngine {
		return ""
	}
	path, _ := v.Get(SimKeyPrefix + "profile").(string)
	return path
}
