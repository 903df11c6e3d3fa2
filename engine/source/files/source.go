// Package files is the source.Source for files in a local folder: CSV/TSV,
// NDJSON, Parquet, Avro and xlsx.
//
// Listing walks the folder through an os.Root, so neither a glob, a unit
// name nor a symbolic link can reach outside of it. A symbolic link that
// resolves inside the root is followed (a linked file is a unit under the
// link's name, a linked folder is walked, once); a link that leads outside
// the root (or nowhere) is not listed, and LinksOutside names it. Readers
// stream: memory stays bounded whatever the size of the file.
package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/clean"
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

	mu      sync.Mutex
	outside []string // links the last List left out
	// matchedOutside are those of them a glob matched; irregular the
	// files a glob matched that are not regular files.
	matchedOutside, irregular []string
}

// NotRegular names the entries the last List matched that are not regular
// files (named pipes, devices, sockets), each with its kind, as in
// "in/feed.csv (named pipe)", sorted. They are not units: reading a pipe
// or a device can block forever or never end.
func (s *Source) NotRegular() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.irregular)
}

// LeftOut says, in sentences with counts, what the last List matched but
// does not return: files that are not regular, and symbolic links that
// lead outside the root or to nothing. Nil when nothing was left out. A
// loader reports them as findings, so that no matched file is dropped
// unseen.
func (s *Source) LeftOut() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if n := len(s.irregular); n > 0 {
		out = append(out, fmt.Sprintf("files left out: %d matched by the globs, not regular files (pipes, devices, sockets), not read: %s", n, listSome(s.irregular, 5)))
	}
	if n := len(s.matchedOutside); n > 0 {
		out = append(out, fmt.Sprintf("files left out: %d symbolic link(s) matched by the globs lead outside the source folder or to nothing, not read: %s", n, listSome(s.matchedOutside, 5)))
	}
	return out
}

// listSome joins the first k names and says how many more there are.
func listSome(names []string, k int) string {
	if len(names) <= k {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:k], ", ") + fmt.Sprintf(" and %d more", len(names)-k)
}

// irregularKind names the kind of a file that is not regular.
func irregularKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "not a regular file"
}

// LinksOutside names the symbolic links the last List met that lead
// outside the root or to nothing (they are not listed), sorted.
func (s *Source) LinksOutside() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.outside)
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
// nothing contributes nothing; no globs give no units. A glob ending in
// ".xlsx#Sheet name" lists that sheet of each workbook it matches.
func (s *Source) List(ctx context.Context, globs []string) ([]source.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("files: list: %w", err)
	}
	s.mu.Lock()
	s.outside, s.matchedOutside, s.irregular = nil, nil, nil
	s.mu.Unlock()
	if hasSheetGlob(globs) {
		return s.listSheets(ctx, globs) // "*.xlsx#Sheet" (xlsx.go)
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
	var outside, matchedOutside, irregular []string
	matches := func(segs []string) bool {
		return slices.ContainsFunc(pats, func(pat []string) bool { return matchSegs(pat, segs) })
	}
	leaveOut := func(nfc string, segs []string) {
		outside = append(outside, nfc)
		if matches(segs) {
			matchedOutside = append(matchedOutside, nfc)
		}
	}
	realRoot, rerr := filepath.EvalSymlinks(abs)
	if rerr != nil {
		realRoot = abs
	}
	disk := map[string]int{} // on-disk path (below the root) -> index in units
	linkDepth := 0
	// walkAs walks the entries below the on-disk folder dir (slash path
	// relative to the root) under the name prefix: a folder reached
	// through a link keeps the link's name.
	var walkAs func(prefix, dir string) fs.WalkDirFunc
	walkAs = func(prefix, dir string) fs.WalkDirFunc {
		return func(q string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			if q == dir {
				return nil
			}
			p := q
			if prefix != "" {
				p = prefix + strings.TrimPrefix(q, dir)
			}
			nfc := norm.NFC.String(p)
			segs := strings.Split(nfc, "/")
			canMatch := slices.ContainsFunc(pats, func(pat []string) bool { return prefixCanMatch(pat, segs) })
			if d.IsDir() {
				if canMatch {
					return nil
				}
				return fs.SkipDir
			}
			at := q // the file on disk, below the root
			var info os.FileInfo
			if d.Type()&fs.ModeSymlink != 0 {
				// Followed when it resolves inside the root.
				real, err := filepath.EvalSymlinks(filepath.Join(abs, filepath.FromSlash(q)))
				rel := ""
				if err == nil {
					rel, err = filepath.Rel(realRoot, real)
				}
				if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
					leaveOut(nfc, segs)
					return nil
				}
				at = filepath.ToSlash(rel)
				fi, err := root.Stat(at)
				if err != nil {
					leaveOut(nfc, segs)
					return nil
				}
				if fi.IsDir() {
					// A link to the root or to a folder above the link
					// would walk forever; so would links nested too deep.
					parent := path.Dir(q)
					if !canMatch || at == "." || parent == at || strings.HasPrefix(parent+"/", at+"/") || linkDepth >= 8 {
						return nil
					}
					linkDepth++
					defer func() { linkDepth-- }()
					return fs.WalkDir(root.FS(), at, walkAs(p, at))
				}
				info = fi
			}
			if !matches(segs) {
				return nil
			}
			if info == nil && !d.Type().IsRegular() || info != nil && !info.Mode().IsRegular() {
				// Devices, sockets, pipes: not units, but named.
				m := d.Type()
				if info != nil {
					m = info.Mode()
				}
				irregular = append(irregular, nfc+" ("+irregularKind(m)+")")
				return nil
			}
			if prev, ok := seen[nfc]; ok {
				if prev != p {
					return fmt.Errorf("files: %q and %q have the same name in Unicode NFC; rename one", prev, p)
				}
				return nil
			}
			seen[nfc] = p
			if info == nil {
				if info, err = d.Info(); err != nil {
					return err
				}
			}
			u := source.Unit{
				Path:    filepath.Join(abs, filepath.FromSlash(at)),
				Name:    nfc,
				Size:    info.Size(),
				ModTime: info.ModTime().UnixNano(),
			}
			if nfc != p {
				u.OriginalName = p
			}
			// The same file reached twice (through a link and directly)
			// is one unit: its own name wins over a link's.
			if i, ok := disk[at]; ok {
				if at == p {
					units[i] = u
				}
				return nil
			}
			disk[at] = len(units)
			units = append(units, u)
			return nil
		}
	}
	if err := fs.WalkDir(root.FS(), ".", walkAs("", ".")); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("files: list %q: %w", s.Root, ctx.Err())
		}
		return nil, fmt.Errorf("files: list %q: %w", s.Root, err)
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].Name < units[j].Name })
	sort.Strings(outside)
	sort.Strings(matchedOutside)
	sort.Strings(irregular)
	s.mu.Lock()
	s.outside, s.matchedOutside, s.irregular = outside, matchedOutside, irregular
	s.mu.Unlock()
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
// .parquet → parquet, .avro → avro, .xlsx .xlsm → xlsx (a unit "book.xlsx#Sheet" reads
// that sheet; see SheetUnit). An unknown format, a missing or unreadable file, or
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
	rel, sheet := splitSheet(rel) // "book.xlsx#Sheet" reads one sheet (xlsx.go)
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
	case "avro":
		rr, err = newAvroReader(ctx, f, name, opts)
	case "xlsx":
		rr, err = newXLSXReader(ctx, f, name, sheet, opts)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return rr, nil
}

func pickFormat(format, name string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(format)); f {
	case "csv", "tsv", "ndjson", "parquet", "avro", "xlsx":
		return f, nil
	case "jsonl", "json":
		return "ndjson", nil
	case "":
	default:
		return "", fmt.Errorf("unknown format %q (want csv, tsv, ndjson, parquet, avro or xlsx)", format)
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
	case ".avro":
		return "avro", nil
	case ".xlsx", ".xlsm":
		return "xlsx", nil
	case "":
		return "", errors.New("no file extension to tell the format: set the format to csv, ndjson, parquet or avro")
	default:
		return "", fmt.Errorf("unknown file type %q: set the format to csv, ndjson, parquet or avro", ext)
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

// Text encodings.
//
// A CSV or NDJSON unit is read in the encoding pinned by Options.Encoding
// or, when none is, in the one clean.Detect finds in the first
// readerConfig.sampleSize bytes (64 KiB); a byte order mark overrides both
// (as in the WHATWG Encoding Standard) and is skipped. Every unit is decided
// on its own: one EUC-KR file among UTF-8 files is read as EUC-KR.
//
// Records are found, and every row's Raw is kept, in the bytes as stored;
// each record is then decoded to UTF-8 on its own, so that bytes invalid in
// the encoding make that one row Malformed with Rule "encoding" (Values
// then hold U+FFFD where the bad bytes were) and the other rows load:
//
//   - utf-8: records are split on the bytes; Values are substrings.
//   - euc-kr, shift_jis, gb18030, windows-1252 are ASCII-compatible: a byte
//     below 0x80 that starts a character is that ASCII character, and none
//     of them has CR or LF as a trail byte, so records end at the same LFs
//     as in ASCII. Fields are split in the decoded UTF-8 text, where no
//     ASCII byte is ever part of another character. Where a record ends
//     also depends on the quote and the delimiter, and those can be trail
//     bytes (clean.CanTrail): shift_jis and gb18030 trail bytes span
//     0x40–0x7E, so '|' (Shift-JIS "ポ" is 0x83 0x7C), '\', '@', '[', '{'
//     and '~' can be half a character; euc-kr (CP949) trail bytes below
//     0x80 are letters only. '"', ',', ';', tab, CR and LF are never trail
//     bytes of any of them. When the delimiter or quote can be a trail
//     byte, the record scanner reads a copy in which clean.TrailMasker has
//     replaced trail bytes with 0x80. Letters and digits as delimiter or
//     quote are refused for the multi-byte encodings.
//   - utf-16le/be are transcoded to UTF-8 as a stream before records are
//     found; Raw holds the record's UTF-16 bytes exactly as stored (line
//     ending excluded, like "\n\x00" in utf-16le). The transcoding keeps
//     lone surrogates and an odd last byte as invalid UTF-8 (not U+FFFD), so
//     the stored bytes can be rebuilt and the row flagged.
//
// Row.Encoding is the canonical name for every row of a unit that is not
// UTF-8. The byte offsets in a Reason count from the start of Raw. A
// decoded U+FFFD (invalid bytes, or a replacement character already in the
// file) never reaches Values of a Data row.

// textInput is the start of a text unit: its encoding, and the stream that
// records are split on.
type textInput struct {
	// br reads the text as stored (after a byte order mark) or, for UTF-16,
	// transcoded to UTF-8.
	br     *bufio.Reader
	det    clean.Detection
	dec    *clean.Decoder
	utf16  bool
	be     bool
	legacy bool // ASCII-compatible but not UTF-8
	// pinned is set when Options.Encoding decided (no byte order mark did).
	pinned bool
	// sample is the start of the text in UTF-8 (bytes invalid in the
	// encoding are U+FFFD, or left as they are for UTF-8), not consumed.
	sample []byte
	atEOF  bool
	tbuf   []byte // the last record's UTF-8 text
}

// openText settles the encoding of a text unit, skips its byte order mark,
// refuses UTF-32 and binary content, and samples its start.
func openText(r io.Reader, name, what string, opts source.Options, cfg readerConfig) (*textInput, error) {
	br := bufio.NewReaderSize(r, cfg.bufSize)
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return nil, unreadable(name, "cannot read file", err)
	}
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE, 0, 0}) || bytes.HasPrefix(head, []byte{0, 0, 0xFE, 0xFF}) {
		return nil, unreadable(name, "UTF-32 encoded text (byte order mark): convert the file to UTF-8", nil)
	}
	t := &textInput{}
	bomName, bomLen := clean.SniffBOM(head)
	if pin := strings.TrimSpace(opts.Encoding); pin != "" {
		_, canon, err := clean.Lookup(pin)
		if err != nil {
			return nil, unreadable(name, "text encoding", err)
		}
		switch {
		case bomLen == 0:
			t.pinned = true
			t.det = clean.Detection{Name: canon, Confidence: 1, Reason: fmt.Sprintf("pinned as %q", pin)}
		case bomName == canon:
			t.det = clean.Detection{Name: canon, Confidence: 1, BOM: bomLen, Reason: fmt.Sprintf("pinned as %q; byte order mark %s", pin, clean.Hex(head[:bomLen]))}
		default:
			t.det = clean.Detection{Name: bomName, Confidence: 1, BOM: bomLen, Reason: fmt.Sprintf("byte order mark %s overrides the pinned %q", clean.Hex(head[:bomLen]), pin)}
		}
	} else {
		sample, err := br.Peek(cfg.sampleSize)
		switch {
		case err == nil, err == bufio.ErrBufferFull:
			t.det = clean.Detect(sample)
		case err == io.EOF:
			t.det = clean.DetectAll(sample)
		default:
			return nil, unreadable(name, "cannot read file", err)
		}
	}
	if _, err := br.Discard(t.det.BOM); err != nil {
		return nil, unreadable(name, "cannot read file", err)
	}
	t.dec, err = clean.NewDecoder(t.det.Name)
	if err != nil {
		return nil, unreadable(name, "text encoding", err)
	}
	switch t.det.Name {
	case clean.UTF16LE, clean.UTF16BE:
		t.utf16, t.be = true, t.det.Name == clean.UTF16BE
		t.br = bufio.NewReaderSize(&utf16Reader{r: br, be: t.be}, cfg.bufSize)
	case clean.UTF8:
		t.br = br
	default:
		t.legacy = true
		t.br = br
	}
	sample, err := t.br.Peek(cfg.sampleSize)
	switch {
	case err == nil, err == bufio.ErrBufferFull:
	case err == io.EOF:
		t.atEOF = true
	default:
		return nil, unreadable(name, "cannot read file", err)
	}
	if looksBinary(sample) {
		return nil, unreadable(name, "binary content (NUL bytes), not "+what+" file", nil)
	}
	t.sample = sample
	if t.legacy {
		// A character cut by the end of the sample becomes U+FFFD in the
		// last, unterminated record, which the samplers leave out.
		t.sample, _ = t.dec.Append(nil, sample)
	}
	return t, nil
}

// stored returns a record's bytes as stored: rec itself, or for UTF-16 the
// bytes that were transcoded into it.
func (t *textInput) stored(rec []byte) []byte {
	if t.utf16 {
		return utf16Raw(make([]byte, 0, 2*len(rec)), rec, t.be)
	}
	return rec
}

// rowEncoding is Row.Encoding: empty for UTF-8.
func (t *textInput) rowEncoding() string {
	if t.det.Name == clean.UTF8 {
		return ""
	}
	return t.det.Name
}

// decode takes a record as read from br (line ending excluded) and returns
// its bytes as stored (Raw), its UTF-8 text for the parser (valid only
// until the next call), and the first sequence invalid in the encoding.
func (t *textInput) decode(rec []byte) (raw, text []byte, bad *clean.InvalidError) {
	raw = rec
	if t.utf16 {
		raw = utf16Raw(make([]byte, 0, 2*len(rec)), rec, t.be)
	}
	if !t.legacy && cleanUTF8(rec) {
		return raw, rec, nil
	}
	if cap(t.tbuf) > 1<<20 {
		t.tbuf = nil // do not keep a huge buffer for the rest of the file
	}
	text, err := t.dec.Append(t.tbuf[:0], raw)
	t.tbuf = text
	if err != nil {
		var ie *clean.InvalidError
		if !errors.As(err, &ie) {
			ie = &clean.InvalidError{Encoding: t.det.Name}
		}
		return raw, text, ie
	}
	return raw, text, nil
}

// cleanUTF8 reports whether b is valid UTF-8 without U+FFFD, in one pass
// over ASCII text.
func cleanUTF8(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			b = b[i:]
			return utf8.Valid(b) && !bytes.Contains(b, []byte("\uFFFD"))
		}
	}
	return true
}

// encodingReason is the Reason of a row holding bytes invalid in the unit's
// encoding. When the encoding was assumed UTF-8 from the sample, it names
// the encoding the row itself looks like.
func (t *textInput) encodingReason(bad *clean.InvalidError, raw []byte) string {
	msg := bad.Error() + " of the row"
	if t.det.Name == clean.UTF8 && !t.pinned && t.det.BOM == 0 && !bad.Replacement {
		if g := clean.DetectAll(raw); g.Name != clean.UTF8 && g.Confidence >= 0.6 {
			msg += fmt.Sprintf("; the row looks like %s: pin the file's encoding if it is not UTF-8", g.Name)
		}
	}
	return msg
}

// Encoding returns what the reader found out about the unit's encoding.
func (t *textInput) Encoding() clean.Detection { return t.det }

// utf16Reader transcodes UTF-16 to UTF-8. Lone surrogates become their
// 3-byte generalized UTF-8 form (0xED 0xA0–0xBF …, invalid in UTF-8) and an
// odd last byte b becomes 0xFF 0x80|b>>4 0x80|b&0xF (0xFF never occurs in
// UTF-8), so that utf16Raw can rebuild the stored bytes exactly and the
// record fails UTF-8 validation. Neither form contains a byte below 0x80.
type utf16Reader struct {
	r   io.Reader
	be  bool
	in  []byte // stored bytes not transcoded yet
	out []byte // transcoded bytes not returned yet
	off int    // of out
	buf []byte
	err error // from r, returned once in and out are drained
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for u.off == len(u.out) {
		u.out, u.off = u.out[:0], 0
		if u.err != nil {
			if len(u.in) == 0 {
				return 0, u.err
			}
			u.out, _ = transcodeUTF16(u.out, u.in, u.be, true)
			u.in = u.in[:0]
			continue
		}
		if u.buf == nil {
			u.buf = make([]byte, 32<<10)
		}
		n, err := u.r.Read(u.buf)
		u.in = append(u.in, u.buf[:n]...)
		u.err = err
		var used int
		u.out, used = transcodeUTF16(u.out, u.in, u.be, false)
		u.in = u.in[:copy(u.in, u.in[used:])]
	}
	n := copy(p, u.out[u.off:])
	u.off += n
	return n, nil
}

func unit16(b []byte, be bool) uint16 {
	if be {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

// transcodeUTF16 appends the UTF-8 of src to dst (see utf16Reader) and
// returns how many bytes of src it used: all when atEOF, else all but a cut
// unit or a high surrogate whose successor is not read yet.
func transcodeUTF16(dst, src []byte, be, atEOF bool) ([]byte, int) {
	i := 0
	for ; i+1 < len(src); i += 2 {
		u := unit16(src[i:], be)
		switch {
		case u < 0xD800 || u > 0xDFFF:
			dst = utf8.AppendRune(dst, rune(u))
			continue
		case u < 0xDC00:
			if i+3 >= len(src) && !atEOF {
				return dst, i
			}
			if i+3 < len(src) {
				if u2 := unit16(src[i+2:], be); 0xDC00 <= u2 && u2 <= 0xDFFF {
					dst = utf8.AppendRune(dst, 0x10000+(rune(u)-0xD800)<<10+(rune(u2)-0xDC00))
					i += 2
					continue
				}
			}
		}
		dst = append(dst, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
	}
	if i < len(src) {
		if !atEOF {
			return dst, i
		}
		b := src[i]
		dst = append(dst, 0xFF, 0x80|b>>4, 0x80|b&0x0F)
		i++
	}
	return dst, i
}

// utf16Raw appends the UTF-16 bytes that transcodeUTF16 turned into b.
func utf16Raw(dst, b []byte, be bool) []byte {
	put := func(u uint16) {
		if be {
			dst = append(dst, byte(u>>8), byte(u))
		} else {
			dst = append(dst, byte(u), byte(u>>8))
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < utf8.RuneSelf:
			put(uint16(c))
			i++
			continue
		case c == 0xFF && i+2 < len(b):
			dst = append(dst, (b[i+1]&0x0F)<<4|b[i+2]&0x0F)
			i += 3
			continue
		case c == 0xED && i+2 < len(b) && b[i+1] >= 0xA0 && b[i+1] <= 0xBF:
			put(0xD000 | uint16(b[i+1]&0x3F)<<6 | uint16(b[i+2]&0x3F))
			i += 3
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x10000 {
			r -= 0x10000
			put(0xD800 + uint16(r>>10))
			put(0xDC00 + uint16(r&0x3FF))
		} else {
			put(uint16(r)) // U+FFFD for a byte transcodeUTF16 never makes
		}
		i += n
	}
	return dst
}
