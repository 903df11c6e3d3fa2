// Package source defines how rows enter Lima. A Source lists the units of
// input of a table (files, objects, extracts) and opens each as a RowReader
// that yields raw rows with their locator. Casting happens later, in clean.
//
// Optional capabilities are discovered by type assertion, never by growing
// the core interface.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Unit is one independently readable piece of input: a file or an object.
type Unit struct {
	// Path is how the source opens the unit (absolute path, object key).
	Path string
	// Name is the unit's identity for lineage and reports: relative to the
	// source root, NFC-normalized.
	Name string
	// OriginalName is the name as found (it may be NFD); empty when equal to Name.
	OriginalName string
	Size         int64
	// ModTime in Unix nanoseconds, 0 when unknown.
	ModTime int64
	// ETag identifies an object's content (S3); when set, the load id
	// fingerprints name, size and ETag instead of the modification time.
	ETag string
}

// RowKind says what a raw row is.
type RowKind uint8

const (
	// Data is a row to be cast and loaded.
	Data RowKind = iota
	// Header is a header line: read, then skipped for a declared reason.
	Header
	// Blank is an empty line: read, then skipped for a declared reason.
	Blank
	// Malformed is a row the reader could not split into fields (ragged,
	// bad quoting, invalid JSON). It becomes a row-level exception.
	Malformed
)

func (k RowKind) String() string {
	switch k {
	case Data:
		return "data"
	case Header:
		return "header"
	case Blank:
		return "blank"
	case Malformed:
		return "malformed"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Locator points at a row in its source.
type Locator struct {
	// Unit is the unit's Name.
	Unit string `json:"file"`
	// Line is the 1-based line where the row starts (text formats), 0 otherwise.
	Line int64 `json:"line,omitempty"`
	// Row is the 1-based record number within the unit (header included).
	Row int64 `json:"row"`
}

func (l Locator) String() string {
	if l.Line == 0 && l.Row == 0 {
		return l.Unit
	}
	if l.Line > 0 {
		return fmt.Sprintf("%s:%d", l.Unit, l.Line)
	}
	return fmt.Sprintf("%s#%d", l.Unit, l.Row)
}

// Row is one raw row as it arrived.
type Row struct {
	Kind RowKind
	// Values are the fields in the order of RowReader.Columns. For Malformed
	// rows they are whatever could be split, possibly nil.
	Values []string
	// Nulls marks fields the source itself declared null (JSON null, Parquet
	// null). nil means no field was declared null. Text formats leave it nil:
	// null tokens are decided in clean.
	Nulls []bool
	// Raw is the row's bytes exactly as they arrived, line ending excluded,
	// for text formats; nil for binary formats.
	Raw []byte
	Loc Locator
	// Reason says why a Malformed row is malformed.
	Reason string
	// Rule is the rule id of a Malformed row when it is more specific than
	// "malformed_row": "encoding" for bytes invalid in the file's encoding.
	Rule string
	// Encoding names the encoding the row was decoded from when it was not
	// UTF-8 (the raw bytes in Raw are as they arrived).
	Encoding string
}

// RowReader reads one unit.
type RowReader interface {
	// Columns are the field names of the unit: from its header or, without
	// one, col_1..col_n.
	Columns() []string
	// Next returns the next row, or io.EOF at the end. Any other error is a
	// unit-level failure: the rest of the unit cannot be read.
	Next() (Row, error)
	Close() error
}

// Source lists and opens units.
type Source interface {
	// List returns the units matching the globs, in a stable order.
	List(ctx context.Context, globs []string) ([]Unit, error)
	// Open opens a unit for reading with the given format options.
	Open(ctx context.Context, u Unit, opts Options) (RowReader, error)
}

// Options are the format options of a table's source.
type Options struct {
	// Format: csv, ndjson, parquet; empty: from the extension.
	Format string
	// Delimiter, 0 = detect.
	Delimiter rune
	// Quote, 0 = '"'.
	Quote rune
	// Header: "auto", "yes", "no".
	Header string
	// Columns are the expected column names (from the plan), used for header
	// detection and for naming fields of headerless files.
	Columns []string
	// Encoding pins the text encoding ("utf-8", "euc-kr", "shift_jis",
	// "gb18030", "windows-1252", "utf-16le", …); empty means detect per file.
	Encoding string
	// MaxRecordBytes bounds one record of a text unit (a CSV record, an
	// NDJSON line), line ending excluded; 0 means DefaultMaxRecordBytes.
	// A longer record is a Malformed row with Rule RuleRecordTooLarge,
	// holding only the first bytes of it in Raw, and the rest of the unit
	// is read on.
	MaxRecordBytes int
	// ColumnTypes are the plan types of Columns when known (same length),
	// for a source whose values render by type (a DynamoDB binary
	// attribute: its bytes in a binary column, base64 in a string one).
	ColumnTypes []string
}

// DefaultMaxRecordBytes is the longest record read by default: 16 MiB.
const DefaultMaxRecordBytes = 16 << 20

// RuleRecordTooLarge is the Rule of a row longer than Options.MaxRecordBytes.
const RuleRecordTooLarge = "record_too_large"

// ErrUnreadable marks a unit that cannot be read at all; it becomes a
// file-level exception and the other units still load.
var ErrUnreadable = errors.New("unit unreadable")

// RawOpener is the optional capability of a source whose units are files
// or objects: their bytes as they are, for the raw/ landing.
type RawOpener interface {
	OpenRaw(ctx context.Context, u Unit) (io.ReadCloser, error)
}

// Typed is the optional capability of a source whose units say their own
// columns and plan types (a database's catalog, a DynamoDB table's
// profiled attributes): they are taken from it, never inferred from text.
// findings note types that are not a plain mapping.
type Typed interface {
	ColumnTypes(ctx context.Context, u Unit) (cols, planTypes, findings []string, err error)
}

// Counter is the optional capability of a source that counts and sums
// what it reads itself (a DynamoDB scan or export): after its units were
// read to their end, the items read and the exact sum of each attribute's
// numbers (plain decimal text, by source column name), from the values as
// they arrived. Gate 4 proves the lake against them.
type Counter interface {
	ReadTotals() (rows int64, sums map[string]string)
}

// Live is the optional capability of a source whose units have no size or
// modification time to fingerprint (a live table): every run reads it
// afresh and a full load replaces the table.
type Live interface {
	Live() bool
}
