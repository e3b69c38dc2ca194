package validate

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// shardingFlags are run's flags for sharded runs, which come with the
// barrier and merge subcommands.
var shardingFlags = map[string]bool{"shard": true, "barrier": true, "start-at": true, "run-id": true}

// Flags checks, with the lmbench binary at path lmbench, that every flag
// the documents pass to lmbench is one of its subcommand's (from its
// --help), and every key of a --config file an option of the file's
// workload. What it cannot check yet it says in notes: the flags of a
// subcommand the binary does not have, and run's sharding flags of a
// binary without lmbench merge.
func Flags(lmbench string, docs []Document) (errs []error, notes []string) {
	cache := map[string]string{}
	help := func(args ...string) (string, bool, error) {
		key := strings.Join(args, " ")
		if text, ok := cache[key]; ok {
			return text, text != "", nil
		}
		out, err := exec.Command(lmbench, append(args, "--help")...).CombinedOutput()
		text := string(out)
		if strings.Contains(text, `unknown command "`+args[0]+`"`) {
			text = ""
		} else if err != nil {
			return "", false, fmt.Errorf("%s %s --help: %v\n%s", lmbench, key, err, out)
		}
		cache[key] = text
		return text, text != "", nil
	}
	_, sharding, err := help("merge")
	if err != nil {
		return []error{err}, nil
	}

	configMaps := map[string]Document{}
	for _, d := range docs {
		if _, ok := d.Object.(*corev1.ConfigMap); ok {
			configMaps[d.Name] = d
		}
	}
	for _, inv := range Invocations(docs) {
		text, ok, err := help(inv.Subcommand)
		if err != nil {
			return append(errs, err), notes
		}
		if !ok {
			notes = append(notes, fmt.Sprintf("%s: %s: lmbench has no %s subcommand yet: its flags %v are not checked", inv.Doc, inv.Field, inv.Subcommand, inv.Order))
			continue
		}
		for _, f := range inv.Order {
			switch {
			case hasFlag(text, f):
			case inv.Subcommand == "run" && shardingFlags[f] && !sharding:
				notes = append(notes, fmt.Sprintf("%s: %s: lmbench run has no --%s yet (nor lmbench merge): not checked", inv.Doc, inv.Field, f))
			default:
				errs = append(errs, inv.errorf("args", "lmbench %s has no flag --%s (see lmbench %s --help)", inv.Subcommand, f, inv.Subcommand))
			}
		}

		path, ok := inv.flag("config")
		if !ok {
			continue
		}
		v, key, ok := ConfigFile(inv, path)
		if !ok {
			continue // Check reports it
		}
		cm, ok := configMaps[v.Name]
		if !ok {
			continue
		}
		var settings map[string]any
		if err := yaml.Unmarshal([]byte(cm.Object.(*corev1.ConfigMap).Data[key]), &settings); err != nil {
			errs = append(errs, cm.errorf("data."+key, "%v", err))
			continue
		}
		args := []string{"run"}
		if w, _ := settings["workload"].(string); w != "" {
			args = append(args, "--workload", w) // its options too
		}
		text, _, err = help(args...)
		if err != nil {
			return append(errs, err), notes
		}
		for _, k := range sortedKeys(settings) {
			if !hasFlag(text, strings.ReplaceAll(k, "_", "-")) {
				errs = append(errs, cm.errorf("data."+key, "key %s is no option of lmbench %s (see its --help)", k, strings.Join(args, " ")))
			}
		}
	}
	return errs, notes
}

func hasFlag(help, name string) bool {
	return regexp.MustCompile(`(?m)(^|\s)--` + regexp.QuoteMeta(name) + `(\s|=|\[|$)`).MatchString(help)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
