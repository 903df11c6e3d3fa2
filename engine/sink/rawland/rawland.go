// Package rawland lands source files unchanged in the warehouse's raw/
// layer, before they are loaded:
//
//	raw/<source>/<table>/load_date=YYYY-MM-DD/<load-id>/<nfc-name>
//
// in a local warehouse folder or on S3. Each landed file's SHA-256 is
// computed while it is written and verified by reading the stored copy
// back. The original name (it may be NFD) is kept as object metadata on
// S3 (x-amz-meta-lima-original-name, percent-encoded, with
// x-amz-meta-lima-sha256) and, everywhere, in _manifest.json beside the
// files.
package rawland

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/source"
	"github.com/lima-lake/lima/internal/fsx"
	"github.com/lima-lake/lima/internal/s3x"
)

// ManifestName is the manifest of one landing folder.
const ManifestName = "_manifest.json"

// Target is the warehouse: a local folder (Dir) or an S3 URI (S3 with
// Client).
type Target struct {
	Dir    string
	S3     s3x.URI
	Client *s3x.Client
}

// File is one landed file.
type File struct {
	// Name is the NFC name relative to the landing folder.
	Name string `json:"name"`
	// OriginalName is the name as found, when it differs.
	OriginalName string `json:"original_name,omitempty"`
	Bytes        int64  `json:"bytes"`
	SHA256       string `json:"sha256"`
	// Location is where the copy is (path or s3:// URI).
	Location string `json:"location"`
}

// Manifest describes one landing.
type Manifest struct {
	Source   string    `json:"source"`
	Table    string    `json:"table"`
	LoadID   string    `json:"load_id"`
	LoadDate string    `json:"load_date"`
	Landed   time.Time `json:"landed_at"`
	Files    []File    `json:"files"`
	// Extract is set when the landing is a database extract (see
	// LandExtract).
	Extract *Extract `json:"extract,omitempty"`
}

// Prefix is the landing folder of a load, relative to the warehouse.
func Prefix(sourceName, table, loadID string, day time.Time) (string, error) {
	for _, seg := range []string{sourceName, table, loadID} {
		if err := safeSegment(seg); err != nil {
			return "", err
		}
	}
	return path.Join("raw", sourceName, table, "load_date="+day.UTC().Format("2006-01-02"), loadID), nil
}

func safeSegment(s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
		return fmt.Errorf("rawland: %q cannot be a path segment", s)
	}
	return nil
}

// cleanName is the NFC name of a unit without a sheet suffix, refused when
// it could leave the landing folder.
func cleanName(u source.Unit) (name, orig string, err error) {
	name = norm.NFC.String(u.Name)
	if i := strings.LastIndex(strings.ToLower(name), ".xlsx#"); i >= 0 {
		name = name[:i+len(".xlsx")]
	} else if i := strings.LastIndex(strings.ToLower(name), ".xlsm#"); i >= 0 {
		name = name[:i+len(".xlsm")]
	}
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\\") || strings.Contains(name, "\x00") {
		return "", "", fmt.Errorf("rawland: unit name %q cannot be landed", u.Name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", "", fmt.Errorf("rawland: unit name %q would leave the landing folder", u.Name)
		}
	}
	orig = u.OriginalName
	if suffix := norm.NFC.String(u.Name)[len(name):]; suffix != "" {
		orig = strings.TrimSuffix(orig, suffix) // the sheet of a workbook
	}
	if orig == name {
		orig = ""
	}
	return name, orig, nil
}

// Land copies every unit of src (each file once) into the landing folder
// and verifies each copy. src must implement source.RawOpener.
func (t Target) Land(ctx context.Context, src source.Source, sourceName, table, loadID string, day time.Time, units []source.Unit) (*Manifest, error) {
	ro, ok := src.(source.RawOpener)
	if !ok {
		return nil, fmt.Errorf("rawland: source %s cannot hand over its files as they are", sourceName)
	}
	prefix, err := Prefix(sourceName, table, loadID, day)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Source: sourceName, Table: table, LoadID: loadID, LoadDate: day.UTC().Format("2006-01-02"), Landed: time.Now().UTC()}
	seen := map[string]bool{}
	for _, u := range units {
		name, orig, err := cleanName(u)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		r, err := ro.OpenRaw(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("rawland: open %s: %w", name, err)
		}
		f, err := t.put(ctx, prefix+"/"+name, r, orig)
		r.Close()
		if err != nil {
			return nil, err
		}
		f.Name, f.OriginalName = name, orig
		m.Files = append(m.Files, f)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := t.put(ctx, prefix+"/"+ManifestName, bytes.NewReader(b), ""); err != nil {
		return nil, err
	}
	return m, nil
}

// put writes one file, hashing it on the way, then reads the stored copy
// back and compares.
func (t Target) put(ctx context.Context, rel string, r io.Reader, orig string) (File, error) {
	h := sha256.New()
	cr := &countReader{r: io.TeeReader(r, h)}
	var f File
	if t.Client != nil {
		key := t.S3.Join(rel)
		meta := map[string]string{}
		if orig != "" {
			meta["lima-original-name"] = url.PathEscape(orig)
		}
		// The SHA-256 is known only at the end of the stream; the stored
		// copy is verified by reading it back below.
		if err := t.Client.Put(ctx, key.Bucket, key.Key, cr, meta); err != nil {
			return f, fmt.Errorf("rawland: %w", err)
		}
		f.Location = key.String()
	} else {
		dst := filepath.Join(t.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return f, fmt.Errorf("rawland: %w", err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".landing-*")
		if err != nil {
			return f, fmt.Errorf("rawland: %w", err)
		}
		_, err = io.Copy(tmp, cr)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return f, fmt.Errorf("rawland: write %s: %w", rel, err)
		}
		f.Location = dst
	}
	f.Bytes = cr.n
	f.SHA256 = hex.EncodeToString(h.Sum(nil))
	got, err := t.Checksum(ctx, f.Location)
	if err != nil {
		return f, fmt.Errorf("rawland: verify %s: %w", rel, err)
	}
	if got != f.SHA256 {
		return f, fmt.Errorf("%w: %s: sent sha256 %s, stored %s", ErrChecksum, f.Location, f.SHA256, got)
	}
	return f, nil
}

// ErrChecksum: a landed copy differs from what was sent.
var ErrChecksum = errors.New("rawland: checksum mismatch after landing")

// Checksum reads a landed file back and returns its SHA-256.
func (t Target) Checksum(ctx context.Context, location string) (string, error) {
	var r io.ReadCloser
	var err error
	if s3x.IsURI(location) {
		u, perr := s3x.ParseURI(location)
		if perr != nil {
			return "", perr
		}
		r, err = t.Client.Get(ctx, u.Bucket, u.Key)
	} else {
		r, err = os.Open(location)
	}
	if err != nil {
		return "", err
	}
	defer r.Close()
	return fsx.SHA256(r)
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
