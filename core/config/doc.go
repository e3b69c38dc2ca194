// Package config is lmbench's option registry and layered configuration.
//
// One [Registry] maps every option to its config key (snake_case, equal to
// the original tool's exported keys such as "ldqa_document_length"), its
// flag ("--ldqa-document-length") and its environment variable
// ("LMBENCH_LDQA_DOCUMENT_LENGTH"). [Registry.Load] merges, with
// knadh/koanf, in increasing priority: lmbench's defaults, plugin schema
// defaults, a config file (JSON, YAML or TOML, by extension), the
// environment, the command line and answers from the guided setup.
//
// To start: build a registry with [Registry.Add] (the host's options) and
// [Registry.AddPlugin] (each plugin's schema under its prefix), register
// the flags with [Registry.RegisterFlags], parse, then call Load and read
// typed values from the [Values]. [Write] exports a resolved configuration
// that Load reads back.
//
// A file key or variable the registry does not know is an error with a
// "did you mean" — unless [Sources.Elsewhere] shows it to be an option of
// another installed plugin (one file serves several workloads): then it is
// listed in [Values.Ignored] and its value left unchecked.
package config
