package validate

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// APIKeyEnv is the variable lmbench reads the engine's API key from
// (cmd/lmbench/prepare.go).
const APIKeyEnv = "OPENAI_API_KEY"

// CompletionIndexEnv is the variable the shard's index is taken from, set
// from the Indexed Job's annotation (CompletionIndexField).
const (
	CompletionIndexEnv   = "JOB_COMPLETION_INDEX"
	CompletionIndexField = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// Invocation is one container that runs lmbench: its subcommand and flags.
type Invocation struct {
	Doc        Document
	Field      string // "spec.template.spec.containers[0]"
	Container  *corev1.Container
	Pod        *corev1.PodSpec
	Subcommand string              // run, barrier, merge, ...
	Flags      map[string][]string // by name without dashes; "" for a flag without value
	Order      []string            // flag names as written
	Args       []string            // positional arguments after the subcommand
}

// boolFlags take no separate value (written --name or --name=v): the flags
// of lmbench's subcommands that the manifests may use bare.
var boolFlags = map[string]bool{
	"no-interactive": true, "json": true, "quiet": true, "report": true, "no-csv": true,
	"no-metrics": true, "ignore-eos": true, "partial": true, "no-report": true, "help": true,
}

// Invocations lists the containers of docs whose command is lmbench.
func Invocations(docs []Document) []Invocation {
	var out []Invocation
	for _, d := range docs {
		pod, field := podSpec(d)
		if pod == nil {
			continue
		}
		for i := range pod.Containers {
			c := &pod.Containers[i]
			argv := append(slices.Clone(c.Command), c.Args...)
			if len(argv) < 2 || path.Base(argv[0]) != "lmbench" {
				continue
			}
			inv := Invocation{Doc: d, Field: fmt.Sprintf("%s.containers[%d]", field, i), Container: c, Pod: pod,
				Subcommand: argv[1], Flags: map[string][]string{}}
			rest := argv[2:]
			for j := 0; j < len(rest); j++ {
				a := rest[j]
				if !strings.HasPrefix(a, "--") || a == "--" {
					inv.Args = append(inv.Args, a)
					continue
				}
				name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !hasValue && !boolFlags[name] && j+1 < len(rest) && !strings.HasPrefix(rest[j+1], "-") {
					value = rest[j+1]
					j++
				}
				inv.Flags[name] = append(inv.Flags[name], value)
				inv.Order = append(inv.Order, name)
			}
			out = append(out, inv)
		}
	}
	return out
}

func podSpec(d Document) (*corev1.PodSpec, string) {
	switch o := d.Object.(type) {
	case *batchv1.Job:
		return &o.Spec.Template.Spec, "spec.template.spec"
	case *corev1.Pod:
		return &o.Spec, "spec"
	}
	return nil, ""
}

func (inv Invocation) flag(name string) (string, bool) {
	v, ok := inv.Flags[name]
	if !ok {
		return "", false
	}
	return v[len(v)-1], true
}

func (inv Invocation) errorf(field, format string, args ...any) error {
	return inv.Doc.errorf(inv.Field+"."+field, format, args...)
}

// Check applies the rules a sharded run depends on, beyond the schema: the
// shard count agrees everywhere, nothing is retried, the names the objects
// refer to exist, and the API key comes from a Secret.
func Check(docs []Document) []error {
	var errs []error
	byKind := map[string]map[string]Document{}
	for _, d := range docs {
		if byKind[d.Kind] == nil {
			byKind[d.Kind] = map[string]Document{}
		}
		byKind[d.Kind][d.Name] = d
	}
	invs := Invocations(docs)

	for _, d := range docs {
		if job, ok := d.Object.(*batchv1.Job); ok {
			errs = append(errs, checkJob(d, job)...)
		}
		if pod, field := podSpec(d); pod != nil {
			errs = append(errs, checkVolumes(d, pod, field, byKind)...)
			for i := range pod.Containers {
				errs = append(errs, checkContainer(d, &pod.Containers[i], fmt.Sprintf("%s.containers[%d]", field, i))...)
			}
		}
		if cm, ok := d.Object.(*corev1.ConfigMap); ok {
			errs = append(errs, checkConfigMap(d, cm)...)
		}
	}

	var shardCounts []shardCount
	for _, inv := range invs {
		errs = append(errs, checkTemp(inv)...)
		switch inv.Subcommand {
		case "run":
			n, e := checkShard(inv, byKind)
			errs = append(errs, e...)
			if n > 0 {
				shardCounts = append(shardCounts, shardCount{inv, n})
			}
		}
	}
	for _, inv := range invs {
		switch inv.Subcommand {
		case "barrier":
			errs = append(errs, checkBarrier(inv, shardCounts)...)
		case "merge":
			errs = append(errs, checkMerge(inv, invs)...)
		}
	}
	return errs
}

type shardCount struct {
	inv Invocation
	n   int
}

func checkJob(d Document, job *batchv1.Job) []error {
	var errs []error
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		got := "unset (Kubernetes' default is 6)"
		if job.Spec.BackoffLimit != nil {
			got = strconv.Itoa(int(*job.Spec.BackoffLimit))
		}
		errs = append(errs, d.errorf("spec.backoffLimit", "%s, expected 0: a retried pod would send its requests again", got))
	}
	if rp := job.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever {
		errs = append(errs, d.errorf("spec.template.spec.restartPolicy", "%q, expected Never: a restarted container would send its requests again", rp))
	}
	return errs
}

// checkShard checks a lmbench run container and returns the N of its
// --shard (0 when it has none or it is unreadable).
func checkShard(inv Invocation, byKind map[string]map[string]Document) (int, []error) {
	var errs []error
	errs = append(errs, checkAPIKey(inv)...)
	if cfg, ok := inv.flag("config"); ok {
		errs = append(errs, checkConfigPath(inv, cfg, byKind)...)
	}
	if b, ok := inv.flag("barrier"); ok {
		errs = append(errs, checkBarrierURL(inv, b, byKind)...)
	}
	shard, ok := inv.flag("shard")
	if !ok {
		return 0, errs
	}
	job, isJob := inv.Doc.Object.(*batchv1.Job)
	if !isJob {
		return 0, append(errs, inv.errorf("args", "--shard %s outside a Job: only an Indexed Job gives each pod its index", shard))
	}
	idx, count, found := strings.Cut(shard, "/")
	n, err := strconv.Atoi(count)
	if !found || err != nil || n < 1 {
		return 0, append(errs, inv.errorf("args", "--shard %q, expected $(%s)/N with N >= 1", shard, CompletionIndexEnv))
	}
	if idx != "$("+CompletionIndexEnv+")" {
		errs = append(errs, inv.errorf("args", "--shard %q, expected $(%s)/%d: the shard is the pod's completion index", shard, CompletionIndexEnv, n))
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		got := "unset (NonIndexed)"
		if job.Spec.CompletionMode != nil {
			got = string(*job.Spec.CompletionMode)
		}
		errs = append(errs, inv.Doc.errorf("spec.completionMode", "%s, expected Indexed: the completion index is the shard", got))
	}
	for _, f := range []struct {
		name string
		v    *int32
	}{{"spec.completions", job.Spec.Completions}, {"spec.parallelism", job.Spec.Parallelism}} {
		switch {
		case f.v == nil:
			errs = append(errs, inv.Doc.errorf(f.name, "unset, expected %d (the N of --shard %s)", n, shard))
		case int(*f.v) != n:
			errs = append(errs, inv.Doc.errorf(f.name, "%d, expected %d (the N of --shard %s): every shard must run, all at once", *f.v, n, shard))
		}
	}
	if !strings.Contains(flagOr(inv, "output-dir"), "$("+CompletionIndexEnv+")") {
		errs = append(errs, inv.errorf("args", "--output-dir %q does not contain $(%s): the shards would write over each other",
			flagOr(inv, "output-dir"), CompletionIndexEnv))
	}
	if _, ok := inv.flag("barrier"); !ok {
		if _, ok := inv.flag("start-at"); !ok {
			errs = append(errs, inv.errorf("args", "neither --barrier nor --start-at: the shards would not start together"))
		}
	}
	return n, errs
}

func flagOr(inv Invocation, name string) string {
	v, _ := inv.flag(name)
	return v
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func checkContainer(d Document, c *corev1.Container, field string) []error {
	var errs []error
	declared := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		declared[e.Name] = e
	}
	for _, list := range []struct {
		name string
		argv []string
	}{{"command", c.Command}, {"args", c.Args}} {
		for i, a := range list.argv {
			for _, m := range varRef.FindAllStringSubmatch(a, -1) {
				if _, ok := declared[m[1]]; !ok {
					errs = append(errs, d.errorf(fmt.Sprintf("%s.%s[%d]", field, list.name, i),
						"$(%s) is not in the container's env, so Kubernetes passes it unexpanded", m[1]))
				}
			}
			if looksSecret(a) {
				errs = append(errs, d.errorf(fmt.Sprintf("%s.%s[%d]", field, list.name, i), "looks like a secret on the command line; use a Secret"))
			}
		}
	}
	if e, ok := declared[CompletionIndexEnv]; ok {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != CompletionIndexField {
			errs = append(errs, d.errorf(field+".env["+CompletionIndexEnv+"]", "expected valueFrom.fieldRef.fieldPath %s", CompletionIndexField))
		}
	}
	for _, e := range c.Env {
		if e.Value != "" && (secretName.MatchString(e.Name) || looksSecret(e.Value)) {
			errs = append(errs, d.errorf(field+".env["+e.Name+"]", "a literal value; take it from a Secret (valueFrom.secretKeyRef)"))
		}
	}
	return errs
}

func checkAPIKey(inv Invocation) []error {
	for _, e := range inv.Container.Env {
		if e.Name != APIKeyEnv {
			continue
		}
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			return []error{inv.errorf("env["+APIKeyEnv+"]", "expected valueFrom.secretKeyRef: the API key comes from a Secret")}
		}
		return nil
	}
	return []error{inv.errorf("env", "no %s from a Secret: lmbench reads the engine's API key from it", APIKeyEnv)}
}

var (
	// Names of secrets: API_KEY, HF_TOKEN, password (not TOKENIZER, max_tokens).
	secretName = regexp.MustCompile(`(?i)(api[_-]?key|secret|passw(or)?d|(^|[_-])token($|[_-]))`)
	// An assignment of a value to such a name ("api_key: x", "--token=x").
	secretLine = regexp.MustCompile(`(?i)(api[_-]?key|secret|passw(or)?d|(^|[\s_-])token)["']?\s*[:=]\s*["']?[^\s"'#]`)
	openAIKey  = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`)
)

func looksSecret(s string) bool { return openAIKey.MatchString(s) || secretLine.MatchString(s) }

func checkConfigMap(d Document, cm *corev1.ConfigMap) []error {
	var errs []error
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if secretName.MatchString(k) {
			errs = append(errs, d.errorf("data."+k, "a secret in a ConfigMap (readable by anyone who can read the namespace's config); use a Secret"))
			continue
		}
		for i, line := range strings.Split(cm.Data[k], "\n") {
			if looksSecret(line) {
				errs = append(errs, d.errorf("data."+k, "line %d looks like a secret (%s); use a Secret", i+1, redact(line)))
			}
		}
	}
	return errs
}

func redact(line string) string {
	if k, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
		return k + ": …"
	}
	return "…"
}

func checkVolumes(d Document, pod *corev1.PodSpec, field string, byKind map[string]map[string]Document) []error {
	var errs []error
	vols := map[string]bool{}
	for i, v := range pod.Volumes {
		vols[v.Name] = true
		f := fmt.Sprintf("%s.volumes[%d]", field, i)
		switch {
		case v.PersistentVolumeClaim != nil:
			pvc, ok := byKind["PersistentVolumeClaim"][v.PersistentVolumeClaim.ClaimName]
			if !ok {
				errs = append(errs, d.errorf(f+".persistentVolumeClaim.claimName", "%q: no such PersistentVolumeClaim in the manifests", v.PersistentVolumeClaim.ClaimName))
				continue
			}
			modes := pvc.Object.(*corev1.PersistentVolumeClaim).Spec.AccessModes
			if !slices.Contains(modes, corev1.ReadWriteMany) && !slices.Contains(modes, corev1.ReadOnlyMany) {
				errs = append(errs, pvc.errorf("spec.accessModes", "%v, expected ReadWriteMany: the pods that share it run on several nodes", modes))
			}
		case v.ConfigMap != nil:
			if _, ok := byKind["ConfigMap"][v.ConfigMap.Name]; !ok {
				errs = append(errs, d.errorf(f+".configMap.name", "%q: no such ConfigMap in the manifests", v.ConfigMap.Name))
			}
		}
	}
	for ci, c := range pod.Containers {
		for mi, m := range c.VolumeMounts {
			if !vols[m.Name] {
				errs = append(errs, d.errorf(fmt.Sprintf("%s.containers[%d].volumeMounts[%d].name", field, ci, mi), "%q: no such volume in the pod", m.Name))
			}
		}
	}
	return errs
}

// mountOf returns the volume mounted at the longest mount path holding p.
func mountOf(inv Invocation, p string) (*corev1.VolumeMount, *corev1.Volume) {
	var best *corev1.VolumeMount
	for i, m := range inv.Container.VolumeMounts {
		mp := strings.TrimSuffix(m.MountPath, "/")
		if (p == mp || strings.HasPrefix(p, mp+"/")) && (best == nil || len(mp) > len(best.MountPath)) {
			best = &inv.Container.VolumeMounts[i]
		}
	}
	if best == nil {
		return nil, nil
	}
	for i, v := range inv.Pod.Volumes {
		if v.Name == best.Name {
			return best, &inv.Pod.Volumes[i]
		}
	}
	return best, nil
}

// ConfigFile returns the ConfigMap and its key that the file at path is
// mounted from in inv's container; ok is false when path is not on a
// ConfigMap volume.
func ConfigFile(inv Invocation, path string) (volume *corev1.ConfigMapVolumeSource, key string, ok bool) {
	m, v := mountOf(inv, path)
	if m == nil || v == nil || v.ConfigMap == nil {
		return nil, "", false
	}
	return v.ConfigMap, strings.TrimPrefix(strings.TrimPrefix(path, strings.TrimSuffix(m.MountPath, "/")), "/"), true
}

func checkConfigPath(inv Invocation, cfg string, byKind map[string]map[string]Document) []error {
	v, key, ok := ConfigFile(inv, cfg)
	if !ok {
		return []error{inv.errorf("args", "--config %s is not on a ConfigMap volume", cfg)}
	}
	cm, ok := byKind["ConfigMap"][v.Name]
	if !ok {
		return nil // reported with the volume
	}
	if _, ok := cm.Object.(*corev1.ConfigMap).Data[key]; !ok {
		return []error{inv.errorf("args", "--config %s: ConfigMap %s has no key %q", cfg, v.Name, key)}
	}
	return nil
}

func checkBarrierURL(inv Invocation, raw string, byKind map[string]map[string]Document) []error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return []error{inv.errorf("args", "--barrier %q is not a URL", raw)}
	}
	host := strings.SplitN(u.Hostname(), ".", 2)[0]
	svc, ok := byKind["Service"][host]
	if !ok {
		return []error{inv.errorf("args", "--barrier %s: no Service %s in the manifests", raw, host)}
	}
	port := u.Port()
	for _, p := range svc.Object.(*corev1.Service).Spec.Ports {
		if strconv.Itoa(int(p.Port)) == port {
			return nil
		}
	}
	return []error{inv.errorf("args", "--barrier %s: Service %s has no port %s", raw, host, port)}
}

func checkBarrier(inv Invocation, shards []shardCount) []error {
	var errs []error
	v, ok := inv.flag("shards")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		return []error{inv.errorf("args", "--shards %q, expected the number of shards", v)}
	}
	for _, s := range shards {
		if s.n != n {
			errs = append(errs, inv.errorf("args", "--shards %d, but %s runs --shard %s: expected %d", n, s.inv.Doc, flagOr(s.inv, "shard"), s.n))
		}
	}
	return errs
}

func checkMerge(inv Invocation, all []Invocation) []error {
	var errs []error
	out := path.Clean(flagOr(inv, "output-dir"))
	if len(inv.Args) == 0 {
		return []error{inv.errorf("args", "no directory to merge")}
	}
	for _, in := range inv.Args {
		in = path.Clean(in)
		if out == in || strings.HasPrefix(out, in+"/") {
			errs = append(errs, inv.errorf("args", "--output-dir %s is inside %s, which is merged: the merged result would be read as a shard", out, in))
		}
	}
	for _, s := range all {
		od, ok := s.flag("output-dir")
		if _, sharded := s.flag("shard"); s.Subcommand != "run" || !sharded || !ok {
			continue
		}
		parent := path.Dir(path.Clean(od))
		covered := false
		for _, in := range inv.Args {
			in = path.Clean(in)
			if parent == in || path.Clean(od) == in || strings.HasPrefix(parent, in+"/") {
				covered = true
			}
		}
		if !covered {
			errs = append(errs, inv.errorf("args", "%v does not hold %s's --output-dir %s", inv.Args, s.Doc, od))
			continue
		}
		// The same directory must be the same volume in both pods.
		_, sv := mountOf(s, od)
		_, mv := mountOf(inv, od)
		if sv == nil || mv == nil || sv.PersistentVolumeClaim == nil || mv.PersistentVolumeClaim == nil ||
			sv.PersistentVolumeClaim.ClaimName != mv.PersistentVolumeClaim.ClaimName {
			errs = append(errs, inv.errorf("volumeMounts", "%s is not on the same PersistentVolumeClaim as in %s", od, s.Doc))
		}
	}
	return errs
}

// checkTemp: lmbench run and merge start plugins, which go-plugin connects
// over a Unix socket it creates in the temporary directory; on a read-only
// root file system that must be a volume.
func checkTemp(inv Invocation) []error {
	sc := inv.Container.SecurityContext
	if inv.Subcommand != "run" && inv.Subcommand != "merge" && inv.Subcommand != "sweep" ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		return nil
	}
	dir := "/tmp"
	for _, e := range inv.Container.Env {
		if e.Name == "TMPDIR" || e.Name == "PLUGIN_UNIX_SOCKET_DIR" {
			dir = e.Value
		}
	}
	if m, _ := mountOf(inv, dir); m == nil || m.ReadOnly {
		return []error{inv.errorf("volumeMounts", "no writable volume at %s with readOnlyRootFilesystem: lmbench %s could not start its plugins (their sockets go there)", dir, inv.Subcommand)}
	}
	return nil
}
