module github.com/lmbench/lmbench/cmd/lmbench

go 1.26.0

require github.com/lmbench/lmbench/sdk v0.0.0

replace github.com/lmbench/lmbench/sdk => ../../sdk

require github.com/lmbench/lmbench/core v0.0.0

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/lmbench/lmbench/core => ../../core
