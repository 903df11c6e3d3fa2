// Package s3src is the source.Source for objects below an S3 prefix
// (s3://bucket/prefix): the same globs, names and readers as local files
// (engine/source/files).
//
// Keys are listed once per List; names are the keys relative to the prefix
// in Unicode NFC (macOS uploads often carry NFD keys), the original key is
// kept in Unit.OriginalName and used to read. CSV and NDJSON objects are
// streamed from one GET; Parquet and xlsx need random access and an Avro
// file's framing is checked to its end before its rows are read, so they are
// spooled to a 0600 temporary file in a 0700 folder that is removed when
// the reader closes. A unit carries the object's ETag: the load id
// fingerprints objects by key, size and ETag.
package s3src

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/engine/source/files"
	"github.com/lima-lake/lima/internal/s3x"
)

// Source reads the objects below Root.
type Source struct {
	Root   s3x.URI
	client *s3x.Client
	// TempDir is where Parquet, Avro and xlsx objects are spooled (default
	// os.TempDir()).
	TempDir string
}

var _ source.Source = (*Source)(nil)

// New returns a Source for the objects below root (s3://bucket/prefix).
func New(cl *s3x.Client, root string) (*Source, error) {
	u, err := s3x.ParseURI(root)
	if err != nil {
		return nil, err
	}
	if u.Key != "" && !strings.HasSuffix(u.Key, "/") {
		u.Key += "/"
	}
	return &Source{Root: u, client: cl}, nil
}

// Open builds a client from the environment (s3x.FromEnv) and a Source.
func Open(ctx context.Context, root string) (*Source, error) {
	cl, err := s3x.New(ctx, s3x.FromEnv())
	if err != nil {
		return nil, err
	}
	return New(cl, root)
}

// Client is the S3 client in use.
func (s *Source) Client() *s3x.Client { return s.client }

// Object is a listed object with its name relative to the root.
type Object struct {
	s3x.Object
	// Name is the key relative to the root, NFC.
	Name string
}

// Objects lists every object below the root (folder markers excluded).
func (s *Source) Objects(ctx context.Context) ([]Object, error) {
	objs, err := s.client.List(ctx, s.Root.Bucket, s.Root.Key)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(objs))
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, s.Root.Key)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue
		}
		out = append(out, Object{Object: o, Name: norm.NFC.String(rel)})
	}
	return out, nil
}

// List returns the objects matching any glob (relative to the root, NFC,
// "**" for any depth, "book.xlsx#Sheet" for a sheet), sorted by Name.
func (s *Source) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	type pat struct {
		g     *files.Glob
		sheet string
	}
	var pats []pat
	for _, g := range globs {
		file, sheet := files.SplitSheet(g)
		pg, err := files.ParseGlob(file)
		if err != nil {
			return nil, fmt.Errorf("s3: %w", err)
		}
		if pg != nil {
			pats = append(pats, pat{pg, sheet})
		}
	}
	units := []source.Unit{}
	if len(pats) == 0 {
		return units, nil
	}
	objs, err := s.Objects(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, o := range objs {
		if prev, ok := seen[o.Name]; ok && prev != o.Key {
			return nil, fmt.Errorf("s3: keys %q and %q have the same name in Unicode NFC; rename one", prev, o.Key)
		}
		seen[o.Name] = o.Key
		done := map[string]bool{}
		for _, p := range pats {
			if !p.g.Match(o.Name) || done[p.sheet] {
				continue
			}
			done[p.sheet] = true
			u := source.Unit{Path: o.Key, Name: o.Name, Size: o.Size, ModTime: o.LastModified.UnixNano(), ETag: o.ETag}
			if o.Name != strings.TrimPrefix(o.Key, s.Root.Key) {
				u.OriginalName = strings.TrimPrefix(o.Key, s.Root.Key)
			}
			if p.sheet != "" {
				u = files.SheetUnit(u, p.sheet)
			}
			units = append(units, u)
		}
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	return units, nil
}

// Open opens a unit with the reader of its format.
func (s *Source) Open(ctx context.Context, u source.Unit, opts source.Options) (source.RowReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3: open %q: %w", u.Name, err)
	}
	key, sheet := files.SplitSheet(u.Path)
	if key == "" {
		key = s.Root.Key + u.Name
	}
	if !strings.HasPrefix(key, s.Root.Key) || strings.Contains("/"+key+"/", "/../") {
		return nil, unreadable(u.Name, "the key is outside the source prefix", nil)
	}
	name := u.Name
	format, err := files.Format(opts.Format, strings.TrimSuffix(key, "#"+sheet))
	if err != nil {
		return nil, unreadable(name, err.Error(), nil)
	}
	body, err := s.client.Get(ctx, s.Root.Bucket, key)
	if err != nil {
		return nil, unreadable(name, "cannot get object", err)
	}
	if !files.NeedsFile(format) {
		rr, err := files.OpenStream(ctx, body, name, format, opts)
		if err != nil {
			body.Close()
			return nil, err
		}
		return rr, nil
	}
	f, cleanup, err := spool(s.TempDir, body)
	body.Close()
	if err != nil {
		return nil, unreadable(name, "cannot copy the object to a temporary file", err)
	}
	rr, err := files.OpenFile(ctx, f, name, sheet, format, opts)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &spooled{RowReader: rr, cleanup: cleanup}, nil
}

// spool copies r into a 0600 file in a fresh 0700 folder.
func spool(tmp string, r io.Reader) (*os.File, func(), error) {
	dir, err := os.MkdirTemp(tmp, "lima-s3-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	f, err := os.OpenFile(dir+"/object", os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		cleanup()
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		cleanup()
		return nil, nil, err
	}
	return f, func() { f.Close(); cleanup() }, nil
}

type spooled struct {
	source.RowReader
	cleanup func()
}

func (s *spooled) Close() error {
	err := s.RowReader.Close()
	if s.cleanup != nil {
		s.cleanup()
		s.cleanup = nil
	}
	return err
}

// Encoding and Dialect pass through the optional capabilities of the
// wrapped reader.
func (s *spooled) Unwrap() source.RowReader { return s.RowReader }

func unreadable(unit, reason string, err error) error {
	return &files.UnreadableError{Unit: unit, Reason: reason, Err: err}
}

// ErrNotS3 is returned for a root that is not an s3:// URI.
var ErrNotS3 = errors.New("not an s3:// URI")

// OpenRaw streams a unit's object as it is (the raw/ landing); a sheet
// unit opens its workbook.
func (s *Source) OpenRaw(ctx context.Context, u source.Unit) (io.ReadCloser, error) {
	key, _ := files.SplitSheet(u.Path)
	if !strings.HasPrefix(key, s.Root.Key) {
		return nil, fmt.Errorf("s3: %q is outside the source prefix", key)
	}
	return s.client.Get(ctx, s.Root.Bucket, key)
}

// Sheets lists the visible worksheets of an xlsx object (the sheets a
// local workbook proposes, files.Sheets): the object is spooled to a 0600
// temporary file, which is removed before Sheets returns.
func (s *Source) Sheets(ctx context.Context, u source.Unit) ([]string, error) {
	key, _ := files.SplitSheet(u.Path)
	if key == "" {
		key = s.Root.Key + u.Name
	}
	if !strings.HasPrefix(key, s.Root.Key) || strings.Contains("/"+key+"/", "/../") {
		return nil, unreadable(u.Name, "the key is outside the source prefix", nil)
	}
	body, err := s.client.Get(ctx, s.Root.Bucket, key)
	if err != nil {
		return nil, unreadable(u.Name, "cannot get object", err)
	}
	f, cleanup, err := spool(s.TempDir, body)
	body.Close()
	if err != nil {
		return nil, unreadable(u.Name, "cannot copy the object to a temporary file", err)
	}
	defer cleanup()
	names, err := files.Sheets(f.Name())
	var ue *files.UnreadableError
	if errors.As(err, &ue) {
		// Name the object, not the temporary file.
		return nil, unreadable(u.Name, ue.Reason, ue.Err)
	}
	return names, err
}
