package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lmbench/lmbench/core/merge"
)

// upload puts dir's files where u says (nothing when u is nil).
func upload(ctx context.Context, u *merge.Upload, dir string, stdout io.Writer) error {
	if u == nil {
		return nil
	}
	n, err := u.Put(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Uploaded %d files to %s\n", n, u)
	return nil
}
