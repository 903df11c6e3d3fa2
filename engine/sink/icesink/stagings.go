package icesink

// The inventory of staged files. Every staging (one Stage call) draws a
// write id, a UUID that iceberg-go puts into the name of every data file it
// writes (table.WithWriteUUID) and that names the staging's position
// delete files. The id is recorded in the Inventory (the state store)
// before the first file is written and forgotten once the files are
// committed or discarded. A process killed in between leaves the record
// behind; the next run (which holds the workspace lock) calls RemoveStaged
// for it, which removes the table's files named with that id that no
// snapshot references — the files of that staging and nothing else, a
// half-written stub included. It never follows a symbolic link.

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/sink"
)

var _ sink.StagingRemover = (*Sink)(nil)

// tableKey names the table in the inventory: namespace.name.
func (t *Table) tableKey() string { return strings.Join(t.ident, ".") }

func (t *Table) beginStaging(ctx context.Context, writeID string) error {
	if t.s.opts.Inventory == nil {
		return nil
	}
	if err := t.s.opts.Inventory.BeginStaging(ctx, t.tableKey(), writeID); err != nil {
		return fmt.Errorf("record the staging of %s: %w", t.tableKey(), err)
	}
	return nil
}

// endStaging forgets the staging. A failure only leaves the record for the
// next run, whose RemoveStaged then finds the files referenced and keeps
// them.
func (t *Table) endStaging(ctx context.Context, writeID string) {
	if t.s.opts.Inventory != nil && writeID != "" {
		_ = t.s.opts.Inventory.EndStaging(context.WithoutCancel(ctx), writeID)
	}
}

// RemoveStaged removes the files of table (namespace.name) whose name
// carries writeID and that no snapshot of the table references.
func (s *Sink) RemoveStaged(ctx context.Context, tableName, writeID string) (int, error) {
	if len(writeID) < 32 { // a UUID: never a short text every name contains
		return 0, fmt.Errorf("icesink: %q is not a write id", writeID)
	}
	return s.removeUnreferenced(ctx, tableName, "data", func(p string, _ iofs.DirEntry) bool {
		return strings.Contains(path.Base(p), writeID)
	}, referencedNames)
}

var _ sink.CommitLeftoverRemover = (*Sink)(nil)

// RemoveUncommitted removes the files of table's metadata/ folder that a
// commit of a process killed mid-commit wrote and never made current: the
// manifests, manifest list and metadata file iceberg-go writes before the
// catalog takes the new metadata, named with its own commit UUID, not the
// write id. A file goes only when it is a regular file named as iceberg-go
// names them, no metadata version of the table references it (the
// current one — snapshots, manifests, metadata log — nor an earlier one
// the log names: the manifest lists and manifests of snapshots a committed
// expiry dropped are the expiry cleanup's, which removes them last, as the
// evidence of what it has still to do), and it was written at or after
// since, when the interrupted staging began: from then until it died that
// process held the workspace lock, which the caller holds now, so no other
// writer of this workspace's lake wrote there meanwhile.
func (s *Sink) RemoveUncommitted(ctx context.Context, tableName string, since time.Time) (int, error) {
	since = since.Add(-2 * time.Second) // file times are coarser than the state store's
	return s.removeUnreferenced(ctx, tableName, "metadata", func(p string, d iofs.DirEntry) bool {
		if !named("metadata/" + path.Base(p)) {
			return false
		}
		info, err := d.Info()
		return err == nil && !info.ModTime().Before(since)
	}, everReferencedNames)
}

// removeUnreferenced removes the files below the table's folder sub
// (data, metadata) that pick chooses and refsOf does not name (by base
// name; refsOf is read only when there are candidates). Only files count:
// folders, links, devices and pipes are never picked. A missing table or
// folder removes nothing.
func (s *Sink) removeUnreferenced(ctx context.Context, tableName, sub string, pick func(string, iofs.DirEntry) bool,
	refsOf func(icebergio.IO, *table.Table) (map[string]bool, error)) (int, error) {
	tbl, err := s.cat.LoadTable(ctx, catalog.ToIdentifier(strings.Split(tableName, ".")...))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	walker, ok := fs.(icebergio.ListableIO)
	if !ok {
		return 0, fmt.Errorf("icesink: the file system of %s cannot list its files (%T)", tableName, fs)
	}
	var candidates []string
	root := strings.TrimSuffix(tbl.Location(), "/") + "/" + sub
	err = walker.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return iofs.SkipAll
			}
			return err
		}
		if isFile(d) && pick(p, d) {
			candidates = append(candidates, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("list the %s files of %s: %w", sub, tableName, err)
	}
	if len(candidates) == 0 {
		return 0, nil
	}
	refs, err := refsOf(fs, tbl)
	if err != nil {
		return 0, fmt.Errorf("read the manifests of %s: %w", tableName, err)
	}
	n := 0
	var errs []error
	for _, p := range candidates {
		if refs[path.Base(p)] {
			continue // committed: the process died after its commit
		}
		if err := fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// isFile reports whether d is a file: a regular file on disk, or an object
// of an object store (gocloud lists objects as irregular files) — never a
// folder, a symbolic link, a device, a pipe or a socket.
func isFile(d iofs.DirEntry) bool {
	return d.Type()&^iofs.ModeIrregular == 0
}

// referencedNames are the base names of every data and delete file any
// snapshot of the table references (a file named with a UUID is unique by
// its base name).
func referencedNames(fs icebergio.IO, tbl *table.Table) (map[string]bool, error) {
	out := map[string]bool{}
	seen := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		mans, err := snap.Manifests(fs)
		if err != nil {
			return nil, err
		}
		for _, m := range mans {
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			for e, err := range m.Entries(fs, false) { // deleted entries too: older snapshots read them
				if err != nil {
					return nil, err
				}
				if df := e.DataFile(); df != nil {
					out[path.Base(df.FilePath())] = true
				}
			}
		}
	}
	return out, nil
}
