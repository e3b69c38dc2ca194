module github.com/lmbench/lmbench/sdk

go 1.26
