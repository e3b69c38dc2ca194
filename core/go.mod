module github.com/lmbench/lmbench/core

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/rs/zerolog v1.35.1
	github.com/spf13/pflag v1.1.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	golang.org/x/sys v0.29.0 // indirect
)

replace github.com/lmbench/lmbench/sdk => ../sdk
