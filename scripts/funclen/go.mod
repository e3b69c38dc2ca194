module github.com/lmbench/lmbench/scripts/funclen

go 1.26.0
