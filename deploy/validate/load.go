package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// KustomizationFile is the file kubectl apply -k reads; it is checked by
// [Kustomize], not decoded as a Kubernetes object.
const KustomizationFile = "kustomization.yaml"

// Document is one YAML document of a manifest file, decoded.
type Document struct {
	File   string // relative to the directory loaded, with forward slashes
	Index  int    // position in the file, from 0
	Kind   string
	Name   string
	Object runtime.Object // the typed object (*batchv1.Job, *corev1.ConfigMap, ...)
}

// String names the document in errors: "shards.yaml: Job lmbench-shards".
func (d Document) String() string {
	name := d.Name
	if name == "" {
		name = "(no name)"
	}
	return fmt.Sprintf("%s: %s %s", d.File, d.Kind, name)
}

// errorf is an error about a field of the document.
func (d Document) errorf(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", d, field, fmt.Sprintf(format, args...))
}

var (
	// The strict decoder rejects unknown and duplicate fields, naming
	// their path ("unknown field \"spec.completionz\""), and wrong types.
	strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	// The schema of every built-in kind, as structured-merge-diff types
	// derived from the Kubernetes OpenAPI document (client-go embeds it).
	schema = applyconfigurations.NewTypeConverter(scheme.Scheme)
)

// SchemaConverter is the OpenAPI-derived converter documents are checked
// against (exposed for tests).
func SchemaConverter() managedfields.TypeConverter { return schema }

// Load reads every YAML document of the .yaml and .yml files under dir
// (but the kustomization), and checks each twice: decoded strictly into
// its k8s.io/api type, and its raw content validated against the
// Kubernetes schema. Every problem is returned, each naming the file, the
// object and the field.
func Load(dir string) ([]Document, []error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, []error{fmt.Errorf("reading %s: %w", dir, err)}
	}
	slices.Sort(files)
	var docs []Document
	var errs []error
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == KustomizationFile {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d, e := Decode(rel, data)
		docs = append(docs, d...)
		errs = append(errs, e...)
	}
	if len(docs) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no Kubernetes objects found", dir))
	}
	return docs, errs
}

// Decode checks the YAML documents of one file (named file in errors).
func Decode(file string, data []byte) ([]Document, []error) {
	var docs []Document
	var errs []error
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", file, i+1, err))
			break
		}
		if isEmpty(raw) {
			i--
			continue
		}
		d, derrs := decodeOne(file, i, raw)
		errs = append(errs, derrs...)
		if d != nil {
			docs = append(docs, *d)
		}
	}
	return docs, errs
}

func decodeOne(file string, index int, raw []byte) (*Document, []error) {
	// First, leniently, what it is and its name, for the errors.
	var head struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return nil, []error{fmt.Errorf("%s: document %d: not a Kubernetes object: %w", file, index+1, err)}
	}
	d := &Document{File: file, Index: index, Kind: head.Kind, Name: head.Name}
	if head.Kind == "" || head.APIVersion == "" {
		return nil, []error{d.errorf("apiVersion/kind", "missing: every document needs both")}
	}
	var errs []error
	obj, gvk, err := strict.Decode(raw, nil, nil)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %v", d, err))
	}
	if obj == nil || (err != nil && !runtime.IsStrictDecodingError(err)) {
		d = nil // not decoded: the rules of Check cannot read it
	} else {
		d.Object = obj
		d.Kind = gvk.Kind
	}
	where := Document{File: file, Index: index, Kind: head.Kind, Name: head.Name}

	// Second, the document as written (not as the Go types keep it)
	// against the schema: unknown fields, types, and keys of the lists
	// Kubernetes merges by key (two env entries or containers of one name).
	content := map[string]any{}
	if err := yaml.Unmarshal(raw, &content); err != nil {
		return nil, append(errs, fmt.Errorf("%s: %w", where, err))
	}
	u := &unstructured.Unstructured{Object: content}
	if _, err := schema.ObjectToTyped(u); err != nil {
		errs = append(errs, where.errorf("schema", "%v", err))
	}
	if head.Name == "" {
		errs = append(errs, where.errorf("metadata.name", "missing"))
	}
	return d, errs
}

func isEmpty(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && line != "---" {
			return false
		}
	}
	return true
}
