// Package objstore keeps a run's files in S3-compatible object storage
// (AWS S3, MinIO, Ceph RGW, GCS's S3 interface…) through minio-go: a
// sharded run's shards upload their output directories there, and
// lmbench merge reads their journals back, when the machines share no
// volume.
//
// Where: an s3://bucket/prefix URL. The endpoint is AWS_ENDPOINT_URL_S3
// or AWS_ENDPOINT_URL (e.g. http://minio:9000; default AWS S3), and the
// credentials the usual ones: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
// (or MinIO's MINIO_ROOT_USER/MINIO_ROOT_PASSWORD), the shared
// credentials file, or the instance's role. None is ever logged, written
// or passed to a plugin (plugins get an allow-listed environment).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Location is an s3:// URL: a bucket and a key prefix ("" or ending in /).
type Location struct {
	Bucket, Prefix string
}

func (l Location) String() string { return "s3://" + l.Bucket + "/" + l.Prefix }

// IsURL reports whether s names object storage (s3://…).
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// Parse reads s3://bucket/prefix.
func Parse(s string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return Location{}, fmt.Errorf("%q: expected s3://bucket/prefix", s)
	}
	p := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	if p != "" {
		p += "/"
	}
	return Location{Bucket: u.Host, Prefix: p}, nil
}

// Store is a connection to the object storage.
type Store struct {
	c        *minio.Client
	endpoint string
}

// Open connects to the endpoint the environment names, with its
// credentials. Nothing is sent before the first call.
func Open() (*Store, error) {
	raw := os.Getenv("AWS_ENDPOINT_URL_S3")
	if raw == "" {
		raw = os.Getenv("AWS_ENDPOINT_URL")
	}
	host, secure := "s3.amazonaws.com", true
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("AWS_ENDPOINT_URL %q: expected http(s)://host:port", raw)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
	})
	c, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: os.Getenv("AWS_REGION")})
	if err != nil {
		return nil, fmt.Errorf("object storage %s: %w", host, err)
	}
	return &Store{c: c, endpoint: host}, nil
}

// UploadDir puts every regular file of dir (not its subdirectories)
// under loc, and returns the keys written.
func (s *Store) UploadDir(ctx context.Context, dir string, loc Location) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue // temporary files (".name.tmp") and directories
		}
		key := loc.Prefix + e.Name()
		if _, err := s.c.FPutObject(ctx, loc.Bucket, key, filepath.Join(dir, e.Name()), minio.PutObjectOptions{}); err != nil {
			return keys, fmt.Errorf("uploading %s to s3://%s/%s: %w", e.Name(), loc.Bucket, key, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// Find lists the keys under loc whose base name is name, recursively.
func (s *Store) Find(ctx context.Context, loc Location, name string) ([]string, error) {
	var keys []string
	for o := range s.c.ListObjects(ctx, loc.Bucket, minio.ListObjectsOptions{Prefix: loc.Prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing %s: %w", loc, o.Err)
		}
		if path.Base(o.Key) == name {
			keys = append(keys, o.Key)
		}
	}
	return keys, nil
}

// Download writes the object key of loc's bucket to the file to.
func (s *Store) Download(ctx context.Context, loc Location, key, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := s.c.FGetObject(ctx, loc.Bucket, key, to, minio.GetObjectOptions{}); err != nil {
		var er minio.ErrorResponse
		if errors.As(err, &er) && er.Code == "NoSuchKey" {
			return fmt.Errorf("s3://%s/%s: no such object", loc.Bucket, key)
		}
		return fmt.Errorf("downloading s3://%s/%s: %w", loc.Bucket, key, err)
	}
	return nil
}
