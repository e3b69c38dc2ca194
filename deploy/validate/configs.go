package validate

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Configs has lmbench check each run's --config file as the pods would
// load it: for every container running lmbench run with a config from a
// ConfigMap, and for every shard index 0..N-1 of its --shard, lmbench run
// --export-config against the built-in engine (in-process: nothing leaves
// the machine) resolves the file and has the workload check its options
// and its shard, then exits without sending. A value out of range, or a
// workload that cannot be split N ways, fails here instead of in the pods.
// dir is a scratch directory.
func Configs(lmbench string, docs []Document, dir string) []error {
	configMaps := map[string]*corev1.ConfigMap{}
	for _, d := range docs {
		if cm, ok := d.Object.(*corev1.ConfigMap); ok {
			configMaps[d.Name] = cm
		}
	}
	var errs []error
	for k, inv := range Invocations(docs) {
		path, ok := inv.flag("config")
		if inv.Subcommand != "run" || !ok {
			continue
		}
		v, key, ok := ConfigFile(inv, path)
		if !ok || configMaps[v.Name] == nil {
			continue // Check reports it
		}
		cmDoc := findDoc(docs, "ConfigMap", v.Name)
		data, ok := configMaps[v.Name].Data[key]
		if !ok {
			continue
		}
		file := filepath.Join(dir, fmt.Sprintf("config-%d-%s", k, filepath.Base(key)))
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			return append(errs, err)
		}
		shards := []string{""}
		if s, ok := inv.flag("shard"); ok {
			_, count, _ := strings.Cut(s, "/")
			n, err := strconv.Atoi(count)
			if err != nil || n < 1 {
				continue // Check reports it
			}
			shards = shards[:0]
			for i := range n {
				shards = append(shards, fmt.Sprintf("%d/%d", i, n))
			}
		}
		for _, shard := range shards {
			args := []string{"run", "--config", file, "--engine-url", "builtin", "--no-interactive", "--quiet",
				"--export-config", filepath.Join(dir, fmt.Sprintf("export-%d.yaml", k))}
			if shard != "" {
				args = append(args, "--shard", shard, "--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
			}
			var stderr bytes.Buffer
			cmd := exec.Command(lmbench, args...)
			cmd.Stderr = &stderr
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				what := "lmbench run"
				if shard != "" {
					what += " --shard " + shard
				}
				errs = append(errs, cmDoc.errorf("data."+key, "%s refuses it (%v): %s", what, err, lastLine(stderr.String())))
			}
		}
	}
	return errs
}

func findDoc(docs []Document, kind, name string) Document {
	for _, d := range docs {
		if d.Kind == kind && d.Name == name {
			return d
		}
	}
	return Document{Kind: kind, Name: name}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "lmbench: ")
}
