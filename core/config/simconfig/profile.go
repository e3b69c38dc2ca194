package simconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/lmbench/lmbench/core/config"
)

// profileSetting is the built-in engine's setting that names a twin
// profile (--sim-profile, lmbench sim --profile).
const profileSetting = "profile"

// readSimProfile reads the settings of a twin profile (core/twin's
// Profile.Settings: setting name to value as its flag takes it), checking
// that it names only settings there are.
func readSimProfile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p struct {
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: not a twin profile (want lmbench fit's JSON): %w", path, err)
	}
	if p.Settings == nil {
		return nil, fmt.Errorf(`%s: no "settings" object (want a profile lmbench fit wrote)`, path)
	}
	for name := range p.Settings {
		known := slices.ContainsFunc(simSettings, func(s simSetting) bool { return s.name == name })
		if !known || name == profileSetting {
			return nil, fmt.Errorf("%s: setting %q is not one of the built-in engine's (lmbench sim --help lists them)", path, name)
		}
	}
	return p.Settings, nil
}

// profileValues are a profile's settings typed as the registry types
// them, by setting name; nil without --sim-profile.
func profileValues(v *config.Values) (map[string]any, error) {
	key := Key(profileSetting)
	path, _ := v.Get(key).(string)
	if path == "" {
		return nil, nil
	}
	settings, err := readSimProfile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(key), err)
	}
	out := map[string]any{}
	for _, o := range Options("") {
		text, ok := settings[o.Flag]
		if !ok {
			continue
		}
		x, err := o.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: setting %q: %w", v.Origin(key), path, o.Flag, err)
		}
		out[o.Flag] = x
	}
	return out, nil
}
