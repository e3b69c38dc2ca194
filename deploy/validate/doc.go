// Package validate checks the Kubernetes manifests of deploy/kubernetes
// offline, as CI runs them (make test): every YAML document is decoded
// strictly into its k8s.io/api type (unknown fields, duplicate fields and
// wrong types rejected, each named by its path) and validated as written
// against the Kubernetes schema that client-go embeds (structured-merge-diff
// types derived from the OpenAPI document: types, fields, and the keys of
// the lists Kubernetes merges by key); the kustomization is built as
// kubectl apply -k builds it; and [Check] holds the rules a sharded run
// depends on (one shard count everywhere, nothing retried, the claims,
// ConfigMaps and Services referred to exist, the API key from a Secret).
//
// It is its own module, outside the workspace, so that its Kubernetes
// dependencies never enter lmbench's build list.
//
// With the lmbench binary (LMBENCH_BIN in the tests), [Flags] checks that
// every flag and config key the manifests use exists, and [Configs] has
// lmbench resolve the run's config file for every shard, offline.
//
// To start: [Load] a directory, then [Kustomize] and [Check] its documents;
// every function returns all the problems it finds, each naming the file,
// the object and the field.
package validate
