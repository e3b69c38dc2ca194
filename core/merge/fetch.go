package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/objstore"
	"github.com/lmbench/lmbench/core/record"
)

// fetcher fetches the journals under each s3:// source into a temporary
// directory (once each: a shard uploads its journal when it has finished,
// so one there is complete).
type fetcher struct {
	store *objstore.Store // opened at the first s3:// source
	dir   string          // made at the first s3:// source
	got   map[string]bool // keys downloaded
	log   zerolog.Logger
}

// fetch returns the sources with each s3:// one replaced by the local
// directory its journals were fetched into.
func (f *fetcher) fetch(ctx context.Context, sources []string) ([]string, error) {
	out := make([]string, 0, len(sources))
	for i, src := range sources {
		if !objstore.IsURL(src) {
			out = append(out, src)
			continue
		}
		loc, err := objstore.Parse(src)
		if err != nil {
			return nil, err
		}
		if err := f.open(); err != nil {
			return nil, err
		}
		local := filepath.Join(f.dir, fmt.Sprint(i))
		if err := f.download(ctx, loc, local); err != nil {
			return nil, err
		}
		out = append(out, local)
	}
	return out, nil
}

// open opens the store and makes the directory, the first time.
func (f *fetcher) open() error {
	var err error
	if f.store == nil {
		if f.store, err = objstore.Open(); err != nil {
			return err
		}
	}
	if f.dir == "" {
		f.dir, err = os.MkdirTemp("", "lmbench-merge-")
	}
	return err
}

// download fetches the journals under loc not fetched yet into local,
// each in the directory its key names below loc's prefix.
func (f *fetcher) download(ctx context.Context, loc objstore.Location, local string) error {
	keys, err := f.store.Find(ctx, loc, record.JournalName)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(local, 0o755); err != nil {
		return err
	}
	for _, k := range keys {
		if f.got[k] {
			continue
		}
		rel := strings.TrimPrefix(k, loc.Prefix)
		to := filepath.Join(local, filepath.FromSlash(rel))
		if filepath.Dir(to) == local {
			to = filepath.Join(local, "root", record.JournalName) // a journal right at the prefix
		}
		if err := f.store.Download(ctx, loc, k, to); err != nil {
			return err
		}
		f.got[k] = true
		f.log.Info().Str("from", "s3://"+loc.Bucket+"/"+k).Msg("journal fetched")
	}
	return nil
}

// close removes the fetched journals.
func (f *fetcher) close() {
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
}
