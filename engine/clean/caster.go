// Package clean turns raw text cells into typed values. Every cell either
// casts, or yields a CellError naming the column, the value and the reason;
// every fix applied on the way is named and counted.
package clean

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"golang.org/x/text/unicode/norm"

	"github.com/lima-lake/lima/engine/plan"
)

// kindOf maps a plan type to the casting kind.
func kindOf(t plan.Type) kind {
	switch t.Kind {
	case plan.Int:
		return kInt
	case plan.Long:
		return kLong
	case plan.Double:
		return kDouble
	case plan.Decimal:
		return kDecimal
	case plan.Date:
		return kDate
	case plan.Timestamp:
		return kTimestamp
	case plan.TimestampTZ:
		return kTimestampTZ
	case plan.Boolean:
		return kBoolean
	case plan.Binary:
		return kBinary
	}
	return kString
}

// Rule ids of cell failures.
const (
	RuleType     = "type"
	RuleNotNull  = "not_null"
	RuleEncoding = "encoding"
	// RuleControlChar: a text value holds NUL or another C0 control but
	// TAB, CR and LF — what a source owner calls a broken value.
	RuleControlChar = "control_char"
)

// ruleError is a cast failure under a rule of its own (not "type").
type ruleError struct {
	rule, reason string
}

func (e ruleError) Error() string { return e.reason }

// controlChar is the first C0 control of s but TAB, CR and LF, or -1.
func controlChar(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return -1
}

// DefaultNullTokens are read as null unless the plan says otherwise.
var DefaultNullTokens = []string{"", "NULL", "null", `\N`}

// ColumnSpec is what clean needs to know of a column.
type ColumnSpec struct {
	Name     string
	Type     plan.Type
	Required bool
	// Formats are date/timestamp patterns, tried in order.
	Formats []string
	// Normalize: trim, upper, lower, zero_pad:N, decimal_comma.
	Normalize []string
	// NullTokens; nil means DefaultNullTokens.
	NullTokens []string
	// Location for naive timestamps and dates; nil means UTC.
	Location *time.Location
	// AllowControl keeps text with control characters (see
	// RuleControlChar); Lima's own columns set it.
	AllowControl bool
	// Currency is the column's ISO 4217 currency (see RuleCurrency).
	Currency string
}

// CellError is one cell that failed.
type CellError struct {
	Column string `json:"column"`
	Value  string `json:"value"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Cell is a typed value of the last appended row.
type Cell struct {
	Null bool
	I    int64 // int, long, date (days), timestamp (µs), boolean (0/1)
	F    float64
	D    decimal128.Num
	S    string
}

type kind uint8

const (
	kString kind = iota
	kInt
	kLong
	kDouble
	kDecimal
	kDate
	kTimestamp
	kTimestampTZ
	kBoolean
	kBinary
)

type column struct {
	spec     ColumnSpec
	kind     kind
	prec, sc int
	nulls    map[string]bool
	// nullList holds the null tokens when they are few: comparing a value
	// with a handful of strings (length first) beats hashing it (isNull).
	nullList []string
	// zeroPadFix and formatFix are the names of those fixes, made once
	// (formatFix[i]: the fix of reading formats[i], "" for none).
	zeroPadFix string
	formatFix  []string
	trim       bool
	nfc        bool
	upper      bool
	lower      bool
	zeroPad    int
	style      NumberStyle
	formats    []dateFormat
	loc        *time.Location
	fixCounts  map[string]int64
}

// Caster casts rows into an Arrow record builder.
type Caster struct {
	cols    []*column
	schema  *arrow.Schema
	builder *array.RecordBuilder
	cells   []Cell
	errs    []CellError
	pending []fixRef
}

type fixRef struct {
	col int
	fix string
}

// ArrowType is the Arrow type Lima writes for a plan type.
func ArrowType(t plan.Type) arrow.DataType {
	switch kindOf(t) {
	case kInt:
		return arrow.PrimitiveTypes.Int32
	case kLong:
		return arrow.PrimitiveTypes.Int64
	case kDouble:
		return arrow.PrimitiveTypes.Float64
	case kDecimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case kDate:
		return arrow.FixedWidthTypes.Date32
	case kTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case kTimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case kBoolean:
		return arrow.FixedWidthTypes.Boolean
	case kBinary:
		return arrow.BinaryTypes.Binary
	}
	return arrow.BinaryTypes.String
}

// NewCaster prepares casting for the columns. schema is the Arrow schema of
// the output (it may carry field-id metadata); it must have the columns in
// the same order.
func NewCaster(specs []ColumnSpec, schema *arrow.Schema, mem memory.Allocator) (*Caster, error) {
	if schema.NumFields() != len(specs) {
		return nil, fmt.Errorf("clean: %d columns but schema has %d fields", len(specs), schema.NumFields())
	}
	c := &Caster{schema: schema, builder: array.NewRecordBuilder(mem, schema), cells: make([]Cell, len(specs))}
	for _, s := range specs {
		col := &column{spec: s, kind: kindOf(s.Type), prec: s.Type.Precision, sc: s.Type.Scale, fixCounts: map[string]int64{}, loc: s.Location}
		if col.style.Currency = s.Currency; s.Currency != "" && !plan.IsCurrencyCode(s.Currency) {
			return nil, fmt.Errorf("clean: column %s: %s", s.Name, plan.CheckCurrency(s.Currency))
		}
		if col.loc == nil {
			col.loc = time.UTC
		}
		tokens := s.NullTokens
		if tokens == nil {
			tokens = DefaultNullTokens
		}
		col.nulls = make(map[string]bool, len(tokens))
		for _, t := range tokens {
			col.nulls[t] = true
		}
		if len(col.nulls) <= 8 {
			for t := range col.nulls {
				col.nullList = append(col.nullList, t)
			}
		}
		for _, n := range s.Normalize {
			name, arg, _ := strings.Cut(n, ":")
			switch name {
			case "trim":
				col.trim = true
			case "nfc":
				col.nfc = true
			case "upper":
				col.upper = true
			case "lower":
				col.lower = true
			case "zero_pad":
				w, err := strconv.Atoi(arg)
				if err != nil || w < 1 || w > 64 {
					return nil, fmt.Errorf("clean: column %s: zero_pad needs a width 1..64, got %q", s.Name, arg)
				}
				col.zeroPad = w
			case "decimal_comma":
				col.style.DecimalComma = true
			case "trailing_minus", "thousands":
				// Always applied to numbers when unambiguous; accepted for clarity.
			default:
				return nil, fmt.Errorf("clean: column %s: unknown normalizer %q", s.Name, n)
			}
		}
		formats := s.Formats
		if len(formats) == 0 {
			switch col.kind {
			case kDate:
				formats = DefaultDateFormats
			case kTimestamp, kTimestampTZ:
				formats = DefaultTimestampFormats
			}
		}
		var err error
		if col.formats, err = compileFormats(formats); err != nil {
			return nil, fmt.Errorf("clean: column %s: %w", s.Name, err)
		}
		col.zeroPadFix = fmt.Sprintf("%s to %d digits", FixZeroPad, col.zeroPad)
		for _, f := range col.formats {
			fix := ""
			if len(s.Formats) > 0 && !isISOPattern(f.pattern) {
				fix = "date format " + f.pattern + " → ISO"
			}
			col.formatFix = append(col.formatFix, fix)
		}
		c.cols = append(c.cols, col)
	}
	return c, nil
}

// Schema is the output schema.
func (c *Caster) Schema() *arrow.Schema { return c.schema }

// Cast casts one row into Cells without appending it. It returns the errors
// of every failing cell (valid until the next call); nil means the row cast.
// Call Accept to append a row that cast and passed the caller's checks.
func (c *Caster) Cast(values []string, declaredNull []bool) []CellError {
	c.errs = c.errs[:0]
	c.pending = c.pending[:0]
	if len(values) != len(c.cols) {
		c.errs = append(c.errs, CellError{Rule: RuleType, Reason: fmt.Sprintf("expected %d fields, found %d", len(c.cols), len(values))})
		return c.errs
	}
	for i, col := range c.cols {
		cell := &c.cells[i]
		*cell = Cell{}
		switch v := values[i]; {
		case declaredNull != nil && declaredNull[i]:
			cell.Null = true
		case col.isNull(v):
			cell.Null = true
			if v != "" {
				c.pending = append(c.pending, fixRef{i, FixNullToken + " (" + v + ")"})
			}
		default:
			fx, err := col.cast(v, cell)
			if err != nil {
				rule := RuleType
				var re ruleError
				if errors.As(err, &re) {
					rule = re.rule
				}
				c.errs = append(c.errs, CellError{Column: col.spec.Name, Value: v, Rule: rule, Reason: err.Error()})
				continue
			}
			for _, f := range fx {
				c.pending = append(c.pending, fixRef{i, f})
			}
		}
		if cell.Null && col.spec.Required {
			c.errs = append(c.errs, CellError{Column: col.spec.Name, Value: values[i], Rule: RuleNotNull, Reason: "required value is missing"})
		}
	}
	if len(c.errs) > 0 {
		return c.errs
	}
	return nil
}

// Accept appends the row last cast successfully and counts its fixes.
func (c *Caster) Accept() {
	for _, p := range c.pending {
		c.cols[p.col].fixCounts[p.fix]++
	}
	c.pending = c.pending[:0]
	for i, col := range c.cols {
		appendCell(c.builder.Field(i), col.kind, &c.cells[i])
	}
}

// Append casts and, when the row casts, accepts it.
func (c *Caster) Append(values []string, declaredNull []bool) []CellError {
	if errs := c.Cast(values, declaredNull); errs != nil {
		return errs
	}
	c.Accept()
	return nil
}

// Cells are the typed values of the row last appended successfully.
func (c *Caster) Cells() []Cell { return c.cells }

// Len is the number of rows in the pending batch.
func (c *Caster) Len() int {
	if len(c.cols) == 0 {
		return 0
	}
	return c.builder.Field(0).Len()
}

// NewBatch returns the pending rows as a record batch and resets the builder.
// The caller owns the batch.
func (c *Caster) NewBatch() arrow.RecordBatch { return c.builder.NewRecordBatch() }

// Release frees the builder.
func (c *Caster) Release() { c.builder.Release() }

// Normalization is a fix that fired, with its count.
type Normalization struct {
	Column string `json:"column"`
	Fix    string `json:"fix"`
	Count  int64  `json:"count"`
}

// Normalizations lists every fix applied to rows that were appended, sorted.
func (c *Caster) Normalizations() []Normalization {
	var out []Normalization
	for _, col := range c.cols {
		for f, n := range col.fixCounts {
			out = append(out, Normalization{Column: col.spec.Name, Fix: f, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Column != out[j].Column {
			return out[i].Column < out[j].Column
		}
		return out[i].Fix < out[j].Fix
	})
	return out
}

// zeroPadded is s with zeros in front to width w (len(s) < w).
func zeroPadded(s string, w int) string {
	var b strings.Builder
	b.Grow(w)
	for range w - len(s) {
		b.WriteByte('0')
	}
	b.WriteString(s)
	return b.String()
}

// formatFixOf is the fix of reading a value with format idx.
func (col *column) formatFixOf(idx int) string {
	if col.formatFix == nil { // a column made without NewCaster
		if len(col.spec.Formats) > 0 && !isISOPattern(col.formats[idx].pattern) {
			return "date format " + col.formats[idx].pattern + " → ISO"
		}
		return ""
	}
	return col.formatFix[idx]
}

// isNull reports whether v is one of the column's null tokens.
func (col *column) isNull(v string) bool {
	if col.nullList == nil {
		return col.nulls[v]
	}
	for _, t := range col.nullList {
		if v == t {
			return true
		}
	}
	return false
}

func (col *column) cast(v string, cell *Cell) ([]string, error) {
	var fixes []string
	if col.kind == kString || col.kind == kBinary {
		if !utf8.ValidString(v) && col.kind == kString {
			return nil, fmt.Errorf("invalid UTF-8 bytes")
		}
		if col.kind == kString && !col.spec.AllowControl {
			if i := controlChar(v); i >= 0 {
				return nil, ruleError{RuleControlChar, fmt.Sprintf("control character U+%04X at byte %d (allow_control_chars: true keeps it)", v[i], i)}
			}
		}
		s := v
		if col.trim {
			if t := strings.TrimSpace(s); t != s {
				s = t
				fixes = append(fixes, FixTrim)
			}
		}
		if col.nfc && !norm.NFC.IsNormalString(s) {
			s = norm.NFC.String(s)
			fixes = append(fixes, FixNFC)
		}
		if col.upper {
			if u := strings.ToUpper(s); u != s {
				s = u
				fixes = append(fixes, FixUpper)
			}
		}
		if col.lower {
			if l := strings.ToLower(s); l != s {
				s = l
				fixes = append(fixes, FixLower)
			}
		}
		if col.zeroPad > 0 && len(s) < col.zeroPad && s != "" && allDigits(s) {
			s = zeroPadded(s, col.zeroPad)
			fixes = append(fixes, col.zeroPadFix)
		}
		if s == "" && col.spec.Required {
			cell.Null = true
			return fixes, nil
		}
		cell.S = s
		return fixes, nil
	}
	switch col.kind {
	case kInt:
		if n, ok := fastInt(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			cell.I = n
			return nil, nil
		}
		n, fx, err := ParseInt(v, math.MinInt32, math.MaxInt32, col.style)
		cell.I = n
		return fx, err
	case kLong:
		if n, ok := fastInt(v); ok {
			cell.I = n
			return nil, nil
		}
		n, fx, err := ParseInt(v, math.MinInt64, math.MaxInt64, col.style)
		cell.I = n
		return fx, err
	case kDecimal:
		if !col.style.DecimalComma {
			if d, ok := fastDecimal(v, col.prec, col.sc); ok {
				cell.D = d
				return nil, nil
			}
		}
		d, fx, err := ParseDecimal(v, col.prec, col.sc, col.style)
		cell.D = d
		return fx, err
	case kDouble:
		// Scientific notation is a float's own form (1.5e+300).
		if t := strings.TrimSpace(v); strings.ContainsAny(t, "eE") && !hasCurrency(t) {
			f, err := strconv.ParseFloat(t, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%q is not a number", v)
			}
			cell.F = f
			return nil, nil
		}
		n, err := splitNumber(v, col.style)
		if err != nil {
			if isRuleError(err) {
				return n.fixes, err
			}
			return n.fixes, fmt.Errorf("%q is not a number", v)
		}
		txt := n.intPart
		if n.fracPart != "" {
			txt += "." + n.fracPart
		}
		f, perr := strconv.ParseFloat(txt, 64)
		if perr != nil {
			return n.fixes, fmt.Errorf("%q is not a number", v)
		}
		if n.neg {
			f = -f
		}
		cell.F = f
		return n.fixes, nil
	case kBoolean:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "t", "yes", "y", "1":
			cell.I = 1
		case "false", "f", "no", "n", "0":
			cell.I = 0
		default:
			return nil, fmt.Errorf("%q is not a boolean", v)
		}
		return nil, nil
	case kDate, kTimestamp, kTimestampTZ:
		s := strings.TrimSpace(v)
		if s != v {
			fixes = append(fixes, FixTrim)
		}
		t, idx, err := parseTime(s, col.formats, col.loc)
		if err != nil {
			return fixes, err
		}
		if fix := col.formatFixOf(idx); fix != "" {
			fixes = append(fixes, fix)
		}
		if col.kind == kDate {
			y, m, d := t.Date()
			cell.I = int64(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
		} else if col.kind == kTimestamp {
			y, mo, d := t.Date()
			h, mi, se := t.Clock()
			cell.I = time.Date(y, mo, d, h, mi, se, t.Nanosecond(), time.UTC).UnixMicro()
		} else {
			cell.I = t.UnixMicro()
		}
		return fixes, nil
	}
	return nil, fmt.Errorf("unsupported type")
}

func appendCell(b array.Builder, k kind, c *Cell) {
	if c.Null {
		b.AppendNull()
		return
	}
	switch k {
	case kString:
		b.(*array.StringBuilder).Append(c.S)
	case kBinary:
		b.(*array.BinaryBuilder).Append([]byte(c.S))
	case kInt:
		b.(*array.Int32Builder).Append(int32(c.I))
	case kLong:
		b.(*array.Int64Builder).Append(c.I)
	case kDouble:
		b.(*array.Float64Builder).Append(c.F)
	case kDecimal:
		b.(*array.Decimal128Builder).Append(c.D)
	case kDate:
		b.(*array.Date32Builder).Append(arrow.Date32(c.I))
	case kTimestamp, kTimestampTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(c.I))
	case kBoolean:
		b.(*array.BooleanBuilder).Append(c.I == 1)
	}
}

// isISOPattern reports whether a declared pattern is ISO 8601 already
// (reading it is not a fix).
func isISOPattern(p string) bool {
	return strings.HasPrefix(p, "yyyy-MM-dd") && (len(p) == len("yyyy-MM-dd") || p[len("yyyy-MM-dd")] == 'T' || p[len("yyyy-MM-dd")] == ' ')
}
