package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/objstore"
	"github.com/lmbench/lmbench/core/record"
)

// keyUploadTo is --upload-to: where a run's files go once written.
const keyUploadTo = "upload_to"

func uploadOptions() []config.Option {
	return []config.Option{
		{Key: keyUploadTo, Type: tString, Default: "", Label: "Upload to", Group: generalGroup, Advanced: true,
			Help: "Also put the output directory's files in S3-compatible object storage once the run has written them (whatever way it ended): s3://bucket/prefix (e.g. s3://bench/run-7/shard-0; lmbench merge reads s3:// URLs back). The endpoint is AWS_ENDPOINT_URL (default AWS S3), the credentials AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance's role."},
	}
}

// uploadPlan is --upload-to checked before any network traffic; nil
// without one.
type uploadPlan struct {
	loc   objstore.Location
	store *objstore.Store
}

func checkUpload(v *config.Values) (*uploadPlan, error) {
	raw := v.String(keyUploadTo)
	if raw == "" {
		return nil, nil
	}
	loc, err := objstore.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyUploadTo), err)
	}
	st, err := objstore.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyUploadTo), err)
	}
	return &uploadPlan{loc: loc, store: st}, nil
}

// upload puts dir's files under the plan's location.
func (u *uploadPlan) upload(ctx context.Context, dir string, stdout io.Writer) error {
	if u == nil {
		return nil
	}
	keys, err := u.store.UploadDir(ctx, dir, u.loc)
	if err != nil {
		return fmt.Errorf("--upload-to: %w (the files are still in %s)", err, dir)
	}
	fmt.Fprintf(stdout, "Uploaded %d files to %s\n", len(keys), u.loc)
	return nil
}

// s3Args fetches the journals under each s3:// argument into dir (once
// each: a shard uploads its journal when it has finished, so one there is
// complete) and returns the arguments with each s3:// one replaced by its
// local copy.
type s3Args struct {
	store *objstore.Store
	dir   string
	got   map[string]bool // keys downloaded
	log   zerolog.Logger
}

func (a *s3Args) resolve(ctx context.Context, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i, arg := range args {
		if !objstore.IsURL(arg) {
			out = append(out, arg)
			continue
		}
		loc, err := objstore.Parse(arg)
		if err != nil {
			return nil, err
		}
		if a.store == nil {
			if a.store, err = objstore.Open(); err != nil {
				return nil, err
			}
		}
		keys, err := a.store.Find(ctx, loc, record.JournalName)
		if err != nil {
			return nil, err
		}
		local := filepath.Join(a.dir, fmt.Sprint(i))
		if err := os.MkdirAll(local, 0o755); err != nil {
			return nil, err
		}
		for _, k := range keys {
			if a.got[k] {
				continue
			}
			rel := strings.TrimPrefix(k, loc.Prefix)
			to := filepath.Join(local, filepath.FromSlash(rel))
			if filepath.Dir(to) == local {
				to = filepath.Join(local, "root", record.JournalName) // a journal right at the prefix
			}
			if err := a.store.Download(ctx, loc, k, to); err != nil {
				return nil, err
			}
			a.got[k] = true
			a.log.Info().Str("from", "s3://"+loc.Bucket+"/"+k).Msg("journal fetched")
		}
		out = append(out, local)
	}
	return out, nil
}
