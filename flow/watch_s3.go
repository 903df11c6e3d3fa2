package flow

// The watcher's lister of an S3 prefix (a files source whose path is
// s3://bucket/prefix).
//
// Identity: an object is identified by its key (relative to the prefix,
// NFC — the name the load uses), its size and its ETag, not by a sha256 of
// its bytes. The ETag is what the load already fingerprints S3 objects by
// (run.loadID), S3 computes it on every write, and using it means the
// watcher never downloads an object just to recognise it: a GET happens
// only to count lines when --batch-rows caps a micro-batch, and for the
// load itself. The commit records the same identity (run.PropFiles entries
// carry "etag" instead of "sha256"), so what the watcher reads back from
// lima.files when it starts is what it compares against while it runs.
//
// Consequences, the same as for local files: the same bytes uploaded again
// under the same key (same size, same ETag) are not loaded again; an
// object overwritten with new content gets a new ETag and loads as a new
// version (appended, like a local file rewritten with new bytes). One
// caveat: a multipart upload's ETag depends on the part size, so the same
// bytes uploaded once whole and once in parts of another size look like a
// new version.
//
// Change capture (load.mode cdc) identifies a change file by its name and
// the sha256 of its bytes (run.PropCDCFiles records no ETag), so for a
// change-capture table the watcher reads each new object version once for
// its sha256 (cached by key, size, last-modified time and ETag) and
// compares that with the commits: each change file applies once, and the
// same bytes under another key are held back by the run as "seen twice".
//
// Stability: an object is taken once two polls saw the same size, ETag and
// last-modified time (S3 writes are atomic, so this only guards against a
// producer rewriting a key in quick succession).

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/s3src"
	"github.com/lima-lake/lima/internal/s3x"
)

// S3Lister lists the objects below an S3 prefix through the S3 source
// (engine/source/s3src): the same globs, names and keys as the load.
type S3Lister struct {
	// Root is s3://bucket/prefix.
	Root string
	// Client, when set, is used instead of one built from the environment.
	Client *s3x.Client

	mu    sync.Mutex
	src   *s3src.Source
	units map[string]source.Unit
}

// NewS3Lister returns a lister of root (s3://bucket/prefix); the client
// is built from the environment on the first List.
func NewS3Lister(root string) *S3Lister { return &S3Lister{Root: root} }

func (l *S3Lister) source(ctx context.Context) (*s3src.Source, error) {
	if l.src != nil {
		return l.src, nil
	}
	var err error
	if l.Client != nil {
		l.src, err = s3src.New(l.Client, l.Root)
	} else {
		l.src, err = s3src.Open(ctx, l.Root)
	}
	return l.src, err
}

// List lists the objects matching globs; Checksum is "etag:" + the ETag.
func (l *S3Lister) List(ctx context.Context, globs []string) ([]WatchedFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	src, err := l.source(ctx)
	if err != nil {
		return nil, err
	}
	units, err := src.List(ctx, globs)
	if err != nil {
		return nil, err
	}
	l.units = map[string]source.Unit{}
	out := make([]WatchedFile, 0, len(units))
	for _, u := range units {
		if u.ETag == "" {
			return nil, fmt.Errorf("s3: %s has no ETag; the watcher identifies objects by key, size and ETag", u.Name)
		}
		l.units[u.Name] = u
		out = append(out, WatchedFile{Name: u.Name, Size: u.Size, ModTime: time.Unix(0, u.ModTime), Checksum: etagID(u.ETag)})
	}
	return out, nil
}

// Open streams a listed object (to count its lines).
func (l *S3Lister) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	l.mu.Lock()
	u, ok := l.units[name]
	src := l.src
	l.mu.Unlock()
	if !ok || src == nil {
		return nil, fmt.Errorf("%s was not listed", name)
	}
	return src.OpenRaw(ctx, u)
}

// etagID is the checksum part of an object's identity.
func etagID(etag string) string { return "etag:" + etag }
