package record

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path through a temporary file in the
// same directory, renamed over path once complete: path is never empty
// or half-written. When the write fails, an older file at path (another
// run's) is removed rather than left to pass for this run's.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		os.Remove(path)
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		os.Remove(path)
		return err
	}
	return nil
}
