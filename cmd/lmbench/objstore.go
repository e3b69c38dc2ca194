package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/merge"
)

// keyUploadTo is --upload-to: where a run's files go once written.
const keyUploadTo = "upload_to"

func uploadOptions() []config.Option {
	return []config.Option{
		{Key: keyUploadTo, Type: tString, Default: "", Label: "Upload to", Group: generalGroup, Advanced: true,
			Help: "Also put the output directory's files in S3-compatible object storage once the run has written them (whatever way it ended): s3://bucket/prefix (e.g. s3://bench/run-7/shard-0; lmbench merge reads s3:// URLs back). The endpoint is AWS_ENDPOINT_URL (default AWS S3), the credentials AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance's role."},
	}
}

// checkUpload reads --upload-to and opens the store, before any network
// traffic; nil without one.
func checkUpload(v *config.Values) (*merge.Upload, error) {
	raw := v.String(keyUploadTo)
	if raw == "" {
		return nil, nil
	}
	u, err := merge.ParseUpload(raw)
	if err == nil {
		err = u.Open()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyUploadTo), err)
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
