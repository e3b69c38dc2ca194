module github.com/lmbench/lmbench/core

go 1.26

require github.com/lmbench/lmbench/sdk v0.0.0

replace github.com/lmbench/lmbench/sdk => ../sdk
