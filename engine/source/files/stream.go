package files

// Entry points for sources that are not a local folder (S3 objects): the
// same readers and the same glob rules as local files, fed from a stream or
// from a spooled temporary file.

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/lima-lake/lima/engine/source"
)

// Glob is a parsed glob (see Source.List for the rules).
type Glob struct{ segs []string }

// ParseGlob validates a glob relative to a root; a nil Glob (empty glob)
// matches nothing.
func ParseGlob(g string) (*Glob, error) {
	segs, err := parseGlob(g)
	if err != nil || segs == nil {
		return nil, err
	}
	return &Glob{segs: segs}, nil
}

// Match reports whether the NFC name (forward slashes, relative to the
// root) matches.
func (g *Glob) Match(name string) bool {
	return g != nil && matchSegs(g.segs, strings.Split(name, "/"))
}

// SplitSheet splits "book.xlsx#Sheet" into the workbook and the sheet.
func SplitSheet(p string) (file, sheet string) { return splitSheet(p) }

// Format is the reader a unit needs (csv, tsv, ndjson, parquet, xlsx), from
// the format option or the name's extension.
func Format(format, name string) (string, error) { return pickFormat(format, name) }

// NeedsFile reports whether the format is read with random access (Parquet,
// xlsx) and so needs a file rather than a stream. Avro streams, but its
// framing is checked to the end first when it is a file (a file cut short is
// held whole, none of its rows loaded), so an object is spooled too.
func NeedsFile(format string) bool {
	return format == "parquet" || format == "xlsx" || format == "avro"
}

// OpenStream reads a csv, tsv, ndjson or avro unit named name from r; the reader
// closes r when r is an io.Closer.
func OpenStream(ctx context.Context, r io.Reader, name, format string, opts source.Options) (source.RowReader, error) {
	switch format {
	case "csv":
		return newCSVReader(ctx, r, name, opts, csvDefaults)
	case "tsv":
		if opts.Delimiter == 0 {
			opts.Delimiter = '\t'
		}
		return newCSVReader(ctx, r, name, opts, csvDefaults)
	case "ndjson":
		return newNDJSONReader(ctx, r, name, opts, ndjsonDefaults)
	case "avro":
		return newAvroReader(ctx, r, name, opts)
	}
	return nil, unreadable(name, "format "+format+" cannot be streamed; read it from a file", nil)
}

// OpenFile reads a unit of any format from an open file (sheet: the xlsx
// sheet, empty for the first). The reader owns f and closes it.
func OpenFile(ctx context.Context, f *os.File, name, sheet, format string, opts source.Options) (source.RowReader, error) {
	switch format {
	case "parquet":
		return newParquetReader(ctx, f, name)
	case "xlsx":
		return newXLSXReader(ctx, f, name, sheet, opts)
	case "avro":
		return newAvroReader(ctx, f, name, opts)
	}
	return OpenStream(ctx, f, name, format, opts)
}

// OpenRaw opens a unit's file for reading its bytes as they are (the raw/
// landing); a sheet unit opens its workbook.
func (s *Source) OpenRaw(ctx context.Context, u source.Unit) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := s.absRoot()
	if err != nil {
		return nil, err
	}
	rel, err := relPath(abs, u)
	if err != nil {
		return nil, err
	}
	rel, _ = splitSheet(rel)
	root, _, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(rel)
}
