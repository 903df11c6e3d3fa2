// Package fsx writes files the way Lima promises: atomically (temp file,
// fsync, rename), 0600 files in 0700 folders outside the warehouse.
package fsx

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path atomically with mode 0600, creating
// missing parent folders with mode 0700.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic streams what write produces to path atomically with mode
// 0600 (temp file beside it, fsync, rename), creating missing parent
// folders with mode 0700: a reader sees the old file or the whole new one,
// never a part, and nothing is left behind when write fails.
func WriteAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// MkdirPrivate creates a folder (and parents) with mode 0700.
func MkdirPrivate(path string) error { return os.MkdirAll(path, 0o700) }
