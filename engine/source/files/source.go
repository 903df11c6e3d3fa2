// Package files is the source.Source for files in a local folder: CSV/TSV,
// NDJSON and Parquet.
//
// Listing walks the folder through an os.Root, so neither a glob, a unit
// name nor a symbolic link can reach outside of it. Symbolic links are not
// listed (only regular files are units). Readers stream: memory stays
// bounded whatever the size of the file.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/source"
)

// ErrEscapesRoot marks a glob, name or path that would leave the source root
// (an absolute path or a ".." segment).
var ErrEscapesRoot = errors.New("path escapes the source root")

// UnreadableError is the error of a unit that cannot be read at all. It wraps
// source.ErrUnreadable (and the underlying error, if any), so
// errors.Is(err, source.ErrUnreadable) holds; Reason is meant for the
// exception queue.
type UnreadableError struct {
	// Unit is the unit's Name.
	Unit string
	// Reason says why, e.g. "binary content (NUL bytes), not a CSV file".
	Reason string
	// Err is the underlying error, nil when there is none.
	Err error
}

func (e *UnreadableError) Error() string {
	msg := e.Unit + ": " + source.ErrUnreadable.Error() + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns source.ErrUnreadable and the underlying error.
func (e *UnreadableError) Unwrap() []error {
	if e.Err == nil {
		return []error{source.ErrUnreadable}
	}
	return []error{source.ErrUnreadable, e.Err}
}

func unreadable(unit, reason string, err error) error {
	return &UnreadableError{Unit: unit, Reason: reason, Err: err}
}

// Source reads the files below Root.
type Source struct {
	// Root is the folder the globs and unit names are relative to.
	Root string
}

var _ source.Source = (*Source)(nil)

// New returns a Source for the files below root.
func New(root string) *Source { return &Source{Root: root} }

func (s *Source) absRoot() (string, error) {
	if s.Root == "" {
		return "", errors.New("files: source root is empty")
	}
	abs, err := filepath.Abs(s.Root)
	if err != nil {
		return "", fmt.Errorf("files: source root %q: %w", s.Root, err)
	}
	return abs, nil
}

// openRoot opens the root folder, with a clear error when it is missing, not
// a folder or unreadable.
func (s *Source) openRoot() (*os.Root, string, error) {
	abs, err := s.absRoot()
	if err != nil {
		return nil, "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("files: source root %q does not exist: %w", s.Root, err)
		}
		return nil, "", fmt.Errorf("files: source root %q cannot be read: %w", s.Root, err)
	}
	if !fi.IsDir() {
		return nil, "", fmt.Errorf("files: source root %q is not a folder", s.Root)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, "", fmt.Errorf("files: source root %q cannot be opened: %w", s.Root, err)
	}
	return r, abs, nil
}

// List returns the regular files below Root that match any of the globs,
// sorted by Name, each once. Globs are relative to Root and use forward
// slashes; each segment follows path/filepath.Match ('*', '?', '[...]',
// '\\' escapes) and a segment "**" matches any number of folders, including
// none. Globs and names are compared in Unicode NFC. A glob that matches
// nothing contributes nothing; no globs give no units.
func (s *Source) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("files: list: %w", err)
	}
	pats := make([][]string, 0, len(globs))
	for _, g := range globs {
		segs, err := parseGlob(g)
		if err != nil {
			return nil, err
		}
		if segs != nil {
			pats = append(pats, segs)
		}
	}
	root, abs, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	units := []source.Unit{}
	if len(pats) == 0 {
		return units, nil
	}
	seen := map[string]string{} // Name -> on-disk relative path
	walk := func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		nfc := norm.NFC.String(p)
		segs := strings.Split(nfc, "/")
		if d.IsDir() {
			for _, pat := range pats {
				if prefixCanMatch(pat, segs) {
					return nil
				}
			}
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil // symbolic links, devices, sockets: not units
		}
		matched := false
		for _, pat := range pats {
			if matchSegs(pat, segs) {
				matched = true
				break
			}
		}
		if !matched {
			return nil
		}
		if prev, ok := seen[nfc]; ok {
			if prev != p {
				return fmt.Errorf("files: %q and %q have the same name in Unicode NFC; rename one", prev, p)
			}
			return nil
		}
		seen[nfc] = p
		info, err := d.Info()
		if err != nil {
			return err
		}
		u := source.Unit{
			Path:    filepath.Join(abs, filepath.FromSlash(p)),
			Name:    nfc,
			Size:    info.Size(),
			ModTime: info.ModTime().UnixNano(),
		}
		if nfc != p {
			u.OriginalName = p
		}
		units = append(units, u)
		return nil
	}
	if err := fs.WalkDir(root.FS(), ".", walk); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("files: list %q: %w", s.Root, ctx.Err())
		}
		return nil, fmt.Errorf("files: list %q: %w", s.Root, err)
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	return units, nil
}

// parseGlob validates a glob and splits it into NFC segments. It returns nil
// segments (and no error) for an empty glob, which matches nothing.
func parseGlob(g string) ([]string, error) {
	if g == "" {
		return nil, nil
	}
	if strings.Contains(g, "\x00") {
		return nil, fmt.Errorf("files: glob %q contains a NUL byte", g)
	}
	if path.IsAbs(g) || filepath.IsAbs(g) || filepath.VolumeName(g) != "" {
		return nil, fmt.Errorf("files: glob %q is absolute; globs are relative to the source root: %w", g, ErrEscapesRoot)
	}
	g = norm.NFC.String(g)
	var segs []string
	for _, seg := range strings.Split(g, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("files: glob %q has a \"..\" segment: %w", g, ErrEscapesRoot)
		case "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
		default:
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("files: glob %q: %w", g, err)
			}
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return nil, nil
	}
	return segs, nil
}

// matchSegs reports whether the path segments name match the pattern.
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(name); k++ {
				if matchSegs(pat[1:], name[k:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// prefixCanMatch reports whether a file below the folder dir could match.
func prefixCanMatch(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}

// relPath resolves the unit to a path relative to the root, refusing
// anything that would leave it.
func relPath(abs string, u source.Unit) (string, error) {
	if u.Path != "" {
		p := u.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(abs, p)
		}
		rel, err := filepath.Rel(abs, filepath.Clean(p))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return "", fmt.Errorf("files: unit path %q is outside the source root %q: %w", u.Path, abs, ErrEscapesRoot)
		}
		return rel, nil
	}
	name := u.OriginalName
	if name == "" {
		name = u.Name
	}
	if name == "" {
		return "", errors.New("files: unit has neither path nor name")
	}
	if path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("files: unit name %q is absolute: %w", name, ErrEscapesRoot)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", fmt.Errorf("files: unit name %q has a \"..\" segment: %w", name, ErrEscapesRoot)
		}
	}
	return filepath.FromSlash(name), nil
}

// Open opens the unit with the reader chosen by opts.Format or, when empty,
// by the extension: .csv .tsv .txt → csv, .ndjson .jsonl .json → ndjson,
// .parquet → parquet. An unknown format, a missing or unreadable file, or
// content that is not of the format is an error wrapping
// source.ErrUnreadable (an *UnreadableError). The reader checks ctx every
// few thousand rows and fails with ctx's error once it is done.
func (s *Source) Open(ctx context.Context, u source.Unit, opts source.Options) (source.RowReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("files: open %q: %w", u.Name, err)
	}
	abs, err := s.absRoot()
	if err != nil {
		return nil, err
	}
	rel, err := relPath(abs, u)
	if err != nil {
		return nil, err
	}
	name := u.Name
	if name == "" {
		name = norm.NFC.String(filepath.ToSlash(rel))
	}
	format, err := pickFormat(opts.Format, rel)
	if err != nil {
		return nil, unreadable(name, err.Error(), nil)
	}
	root, _, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel)
	root.Close()
	if err != nil {
		return nil, unreadable(name, "cannot open file", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, unreadable(name, "cannot stat file", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, unreadable(name, "not a regular file", nil)
	}
	var rr source.RowReader
	switch format {
	case "csv":
		rr, err = newCSVReader(ctx, f, name, opts, csvDefaults)
	case "tsv":
		if opts.Delimiter == 0 {
			opts.Delimiter = '\t'
		}
		rr, err = newCSVReader(ctx, f, name, opts, csvDefaults)
	case "ndjson":
		rr, err = newNDJSONReader(ctx, f, name, opts, ndjsonDefaults)
	case "parquet":
		rr, err = newParquetReader(ctx, f, name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return rr, nil
}

func pickFormat(format, name string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(format)); f {
	case "csv", "tsv", "ndjson", "parquet":
		return f, nil
	case "jsonl", "json":
		return "ndjson", nil
	case "":
	default:
		return "", fmt.Errorf("unknown format %q (want csv, tsv, ndjson or parquet)", format)
	}
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".csv", ".txt":
		return "csv", nil
	case ".tsv":
		return "tsv", nil
	case ".ndjson", ".jsonl", ".json":
		return "ndjson", nil
	case ".parquet":
		return "parquet", nil
	case "":
		return "", errors.New("no file extension to tell the format: set the format to csv, ndjson or parquet")
	default:
		return "", fmt.Errorf("unknown file type %q: set the format to csv, ndjson or parquet", ext)
	}
}

// closer makes Close idempotent.
type closer struct {
	c      io.Closer
	closed bool
}

func (c *closer) close() error {
	if c.closed || c.c == nil {
		c.closed = true
		return nil
	}
	c.closed = true
	return c.c.Close()
}

var errClosed = fmt.Errorf("files: reader is closed: %w", fs.ErrClosed)
