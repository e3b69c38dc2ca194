package merge

import (
	"context"
	"fmt"

	"github.com/lmbench/lmbench/core/config"
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

// OpenUpload reads a run's --upload-to and opens its store, before
// anything is run; nil without one. An error names the option's origin.
func OpenUpload(o config.Upload) (*Upload, error) {
	if o.To == "" {
		return nil, nil
	}
	u, err := ParseUpload(o.To)
	if err == nil {
		err = u.Open()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Origin, err)
	}
	return u, nil
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
