package validate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const manifests = "../kubernetes"

// all runs every check of a directory, as CI does.
func all(dir string) ([]Document, []error) {
	docs, errs := Load(dir)
	errs = append(errs, Kustomize(dir, docs)...)
	errs = append(errs, Check(docs)...)
	return docs, errs
}

func TestManifests(t *testing.T) {
	docs, errs := all(manifests)
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("deploy/kubernetes does not validate:\n%v", err)
	}
	// The rules above only mean something if they found what they check.
	subs := map[string]int{}
	for _, inv := range Invocations(docs) {
		subs[inv.Subcommand]++
	}
	for _, want := range []string{"run", "barrier", "merge"} {
		if subs[want] != 1 {
			t.Errorf("found %d containers running lmbench %s, want 1 (found %v)", subs[want], want, subs)
		}
	}
}

// TestBroken feeds the checks broken copies of the manifests: each must be
// rejected with an error naming the file, the object and the field.
func TestBroken(t *testing.T) {
	const shardArgs = "            - --shard\n            - $(JOB_COMPLETION_INDEX)/3\n"
	const indexEnv = `            - name: JOB_COMPLETION_INDEX
              valueFrom:
                fieldRef:
                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
`
	const keyEnv = `            - name: OPENAI_API_KEY
              valueFrom:
                secretKeyRef:
                  name: lmbench-engine
                  key: OPENAI_API_KEY
`
	cases := []struct {
		name     string
		file     string
		old, new string
		want     []string // all in one error
	}{
		{"unknown field, strict decoding", "shards.yaml", "  parallelism: 3\n", "  parallelism: 3\n  completionz: 3\n",
			[]string{"shards.yaml: Job lmbench-shards", `strict decoding error: unknown field "spec.completionz"`}},
		{"unknown field, schema", "shards.yaml", "  parallelism: 3\n", "  parallelism: 3\n  completionz: 3\n",
			[]string{"shards.yaml: Job lmbench-shards", "schema", ".spec.completionz", "not declared"}},
		{"unknown field deep in the pod", "merge.yaml", "          image: lmbench\n", "          image: lmbench\n          imagePullPolice: Always\n",
			[]string{"merge.yaml: Job lmbench-merge", "spec.template.spec.containers[0].imagePullPolice"}},
		{"wrong type", "shards.yaml", "  completions: 3\n", "  completions: three\n",
			[]string{"shards.yaml: Job lmbench-shards", "spec.completions", "string"}},
		{"wrong type, schema", "shards.yaml", "  completions: 3\n", "  completions: three\n",
			[]string{"shards.yaml: Job lmbench-shards", "schema", ".spec.completions", "expected"}},
		{"wrong type in a Service", "barrier.yaml", "      port: 7070\n", "      port: [7070]\n",
			[]string{"barrier.yaml: Service lmbench-barrier", "spec.ports.port"}},
		{"duplicate list key (schema)", "shards.yaml", indexEnv, indexEnv + indexEnv,
			[]string{"shards.yaml: Job lmbench-shards", "schema", "env", "duplicate entries", "JOB_COMPLETION_INDEX"}},
		{"parallelism differs from --shard", "shards.yaml", "  parallelism: 3\n", "  parallelism: 2\n",
			[]string{"shards.yaml: Job lmbench-shards", "spec.parallelism", "2, expected 3"}},
		{"--shard N differs from completions", "shards.yaml", shardArgs, strings.Replace(shardArgs, "/3", "/4", 1),
			[]string{"shards.yaml: Job lmbench-shards", "spec.completions", "3, expected 4"}},
		{"barrier --shards differs", "barrier.yaml", `"--shards", "3"`, `"--shards", "4"`,
			[]string{"barrier.yaml: Job lmbench-barrier", "spec.template.spec.containers[0].args", "--shards 4", "expected 3"}},
		{"not Indexed", "shards.yaml", "  completionMode: Indexed\n", "",
			[]string{"shards.yaml: Job lmbench-shards", "spec.completionMode", "expected Indexed"}},
		{"retried shard", "shards.yaml", "  backoffLimit: 0\n", "  backoffLimit: 2\n",
			[]string{"shards.yaml: Job lmbench-shards", "spec.backoffLimit", "2, expected 0"}},
		{"default backoff limit", "merge.yaml", "  backoffLimit: 0\n", "",
			[]string{"merge.yaml: Job lmbench-merge", "spec.backoffLimit", "unset"}},
		{"restarted shard", "shards.yaml", "      restartPolicy: Never\n", "      restartPolicy: OnFailure\n",
			[]string{"shards.yaml: Job lmbench-shards", "spec.template.spec.restartPolicy", "expected Never"}},
		{"index variable not declared", "shards.yaml", indexEnv, "",
			[]string{"shards.yaml: Job lmbench-shards", "spec.template.spec.containers[0].args[", "$(JOB_COMPLETION_INDEX) is not in the container's env"}},
		{"index from the wrong field", "shards.yaml", "job-completion-index", "job-index",
			[]string{"shards.yaml: Job lmbench-shards", "env[JOB_COMPLETION_INDEX]", "fieldRef"}},
		{"API key as a literal", "shards.yaml", keyEnv, "            - name: OPENAI_API_KEY\n              value: sk-live-0123456789abcdef\n",
			[]string{"shards.yaml: Job lmbench-shards", "env[OPENAI_API_KEY]", "Secret"}},
		{"no API key from a Secret", "shards.yaml", keyEnv, "",
			[]string{"shards.yaml: Job lmbench-shards", "spec.template.spec.containers[0].env", "OPENAI_API_KEY"}},
		{"secret in the ConfigMap", "config.yaml", "    seed: 42\n", "    seed: 42\n    api_key: hunter2\n",
			[]string{"config.yaml: ConfigMap lmbench-config", "data.lmbench.yaml", "secret", "api_key: …"}},
		{"claim that does not exist", "merge.yaml", "claimName: lmbench-results", "claimName: lmbench-result",
			[]string{"merge.yaml: Job lmbench-merge", "spec.template.spec.volumes[0].persistentVolumeClaim.claimName", `"lmbench-result"`}},
		{"claim not ReadWriteMany", "results.yaml", "    - ReadWriteMany\n", "    - ReadWriteOnce\n",
			[]string{"results.yaml: PersistentVolumeClaim lmbench-results", "spec.accessModes", "ReadWriteMany"}},
		{"config file not in the ConfigMap", "shards.yaml", "/etc/lmbench/lmbench.yaml", "/etc/lmbench/bench.yaml",
			[]string{"shards.yaml: Job lmbench-shards", "args", "has no key \"bench.yaml\""}},
		{"barrier Service missing", "shards.yaml", "http://lmbench-barrier:7070", "http://barrier:7070",
			[]string{"shards.yaml: Job lmbench-shards", "args", "no Service barrier"}},
		{"shards write one directory", "shards.yaml", "/results/shards/shard-$(JOB_COMPLETION_INDEX)", "/results/shards/all",
			[]string{"shards.yaml: Job lmbench-shards", "args", "--output-dir", "write over each other"}},
		{"merge output read as a shard", "merge.yaml", `"/results/merged"`, `"/results/shards/merged"`,
			[]string{"merge.yaml: Job lmbench-merge", "args", "read as a shard"}},
		{"no writable /tmp for the plugins' sockets", "merge.yaml", "            - name: tmp\n              mountPath: /tmp\n", "",
			[]string{"merge.yaml: Job lmbench-merge", "spec.template.spec.containers[0].volumeMounts", "no writable volume at /tmp"}},
		{"file left out of the kustomization", "kustomization.yaml", "  - merge.yaml\n", "",
			[]string{"merge.yaml: Job lmbench-merge", "not applied by kubectl apply -k"}},
		{"unknown field in the kustomization", "kustomization.yaml", "images:\n", "imagez:\n",
			[]string{"kustomization.yaml", "imagez"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := brokenCopy(t, c.file, c.old, c.new)
			_, errs := all(dir)
			for _, err := range errs {
				if containsAll(err.Error(), c.want) {
					t.Logf("rejected: %v", err)
					return
				}
			}
			t.Errorf("no error contains all of %q; got:\n%v", c.want, errors.Join(errs...))
		})
	}
}

// brokenCopy copies deploy/kubernetes with one replacement in one file.
func brokenCopy(t *testing.T, file, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(manifests)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q: the test no longer breaks what it means to", file, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestDecodeNamesDocuments(t *testing.T) {
	in := "# a comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndatta: {}\n"
	docs, errs := Decode("two.yaml", []byte(in))
	if len(docs) != 2 || docs[0].Name != "a" || docs[1].Name != "b" || docs[1].Index != 1 {
		t.Fatalf("documents %+v, want ConfigMaps a and b", docs)
	}
	if len(errs) == 0 || !containsAll(errs[0].Error(), []string{"two.yaml: ConfigMap b", `unknown field "datta"`}) {
		t.Fatalf("errors %v, want one naming two.yaml: ConfigMap b and the field datta", errs)
	}
	if _, errs := Decode("x.yaml", []byte("kind: Pod\nmetadata: {name: p}\n")); len(errs) != 1 || !strings.Contains(errs[0].Error(), "apiVersion") {
		t.Fatalf("a document without apiVersion: errors %v, want one naming apiVersion", errs)
	}
}
