module github.com/lmbench/lmbench/scripts/bareclient

go 1.26.0
