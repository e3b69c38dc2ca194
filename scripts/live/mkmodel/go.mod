module github.com/lmbench/lmbench/scripts/live/mkmodel

go 1.26.0
