package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/merge"
)

// checkUpload reads --upload-to and opens the store, before any network
// traffic; nil without one.
func checkUpload(spec *config.Spec) (*merge.Upload, error) {
	raw := spec.Upload.To
	if raw == "" {
		return nil, nil
	}
	u, err := merge.ParseUpload(raw)
	if err == nil {
		err = u.Open()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Upload.Origin, err)
	}
	return u, nil
}

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
