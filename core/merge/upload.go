package merge

import (
	"context"
	"fmt"

	"github.com/lmbench/lmbench/core/objstore"
)

// Upload is where a run's files go in S3-compatible object storage once
// written (--upload-to): a shard's, for the merge to fetch, or a merge's.
type Upload struct {
	loc   objstore.Location
	store *objstore.Store
}

// ParseUpload reads an s3://bucket/prefix location.
func ParseUpload(raw string) (*Upload, error) {
	loc, err := objstore.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &Upload{loc: loc}, nil
}

// Open opens the store (the endpoint and credentials from the
// environment), before anything is run.
func (u *Upload) Open() error {
	st, err := objstore.Open()
	if err != nil {
		return err
	}
	u.store = st
	return nil
}

// String is the location, s3://bucket/prefix.
func (u *Upload) String() string { return u.loc.String() }

// Put puts dir's files under the location and returns how many.
func (u *Upload) Put(ctx context.Context, dir string) (int, error) {
	keys, err := u.store.UploadDir(ctx, dir, u.loc)
	if err != nil {
		return 0, fmt.Errorf("--upload-to: %w (the files are still in %s)", err, dir)
	}
	return len(keys), nil
}
