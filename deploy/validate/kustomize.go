package validate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Kustomize builds dir's kustomization as kubectl apply -k does (kubectl
// embeds this kustomize) and checks that it applies exactly the documents
// Load found, and that every container image is one its images: list sets.
func Kustomize(dir string, docs []Document) []error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return []error{err}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return []error{fmt.Errorf("%s: kubectl apply -k would fail: %w", KustomizationFile, err)}
	}
	type key struct{ kind, name string }
	rendered := map[key]bool{}
	var errs []error
	for _, r := range m.Resources() {
		rendered[key{r.GetKind(), r.GetName()}] = true
		obj, err := r.Map()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s: %w", KustomizationFile, r.GetKind(), r.GetName(), err))
			continue
		}
		for _, image := range imagesOf(obj) {
			if !strings.Contains(image, "/") && !strings.Contains(image, ":") {
				errs = append(errs, fmt.Errorf("%s: %s %s: image %q is not set by the images: list (it would be pulled from Docker Hub)",
					KustomizationFile, r.GetKind(), r.GetName(), image))
			}
		}
	}
	for _, d := range docs {
		if !rendered[key{d.Kind, d.Name}] {
			errs = append(errs, fmt.Errorf("%s: not applied by kubectl apply -k: add %s to the resources of %s", d, d.File, KustomizationFile))
		}
		delete(rendered, key{d.Kind, d.Name})
	}
	var extra []string
	for k := range rendered {
		extra = append(extra, k.kind+" "+k.name)
	}
	slices.Sort(extra)
	for _, e := range extra {
		errs = append(errs, fmt.Errorf("%s: applies %s, which no file in the directory defines", KustomizationFile, e))
	}
	return errs
}

// imagesOf lists the container images of a pod, a pod template or a Job.
func imagesOf(obj map[string]any) []string {
	spec := dig(obj, "spec")
	if t := dig(spec, "template", "spec"); t != nil {
		spec = t
	}
	var out []string
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if s, ok := m["image"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func dig(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
