package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Partition transforms, as in the Iceberg spec.
const (
	TransformIdentity = "identity"
	TransformYear     = "year"
	TransformMonth    = "month"
	TransformDay      = "day"
	TransformHour     = "hour"
	TransformBucket   = "bucket"
	TransformTruncate = "truncate"
)

// PartitionField is one entry of Table.Partition.
type PartitionField struct {
	Column string
	// Transform is one of the Transform constants.
	Transform string
	// Param is the bucket count N of bucket(N, col) or the width W of
	// truncate(W, col); 0 for the other transforms.
	Param int
}

const partitionHelp = "write col, year(col), month(col), day(col), hour(col), bucket(N, col) or truncate(W, col)"

// ParsePartition reads one partition entry: col (identity), year(col),
// month(col), day(col), hour(col), bucket(N, col) or truncate(W, col), with
// N, W ≥ 1. Blanks around names, numbers and parentheses are ignored, and so
// is the case of the transform name.
func ParsePartition(s string) (PartitionField, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return PartitionField{}, fmt.Errorf("empty partition entry; %s", partitionHelp)
	}
	open := strings.IndexByte(t, '(')
	if open < 0 {
		if !isIdent(t) {
			return PartitionField{}, fmt.Errorf("%q is neither a column name nor a transform; %s", s, partitionHelp)
		}
		return PartitionField{Column: t, Transform: TransformIdentity}, nil
	}
	name := strings.ToLower(strings.TrimSpace(t[:open]))
	if !strings.HasSuffix(t, ")") {
		return PartitionField{}, fmt.Errorf("%q: missing closing parenthesis; %s", s, partitionHelp)
	}
	inner := t[open+1 : len(t)-1]
	if strings.ContainsAny(inner, "()") {
		return PartitionField{}, fmt.Errorf("%q: transforms cannot be nested; %s", s, partitionHelp)
	}
	var args []string
	if strings.TrimSpace(inner) != "" {
		for _, a := range strings.Split(inner, ",") {
			args = append(args, strings.TrimSpace(a))
		}
	}
	switch name {
	case TransformIdentity, TransformYear, TransformMonth, TransformDay, TransformHour:
		if len(args) != 1 {
			if len(args) == 0 {
				return PartitionField{}, fmt.Errorf("%s() needs a column, e.g. %s(order_date)", name, name)
			}
			return PartitionField{}, fmt.Errorf("%q: %s takes one column, not %d arguments, e.g. %s(order_date)", s, name, len(args), name)
		}
		if !isIdent(args[0]) {
			return PartitionField{}, fmt.Errorf("%q: %q is not a column name", s, args[0])
		}
		return PartitionField{Column: args[0], Transform: name}, nil
	case TransformBucket, TransformTruncate:
		what, example := "count", "bucket(16, customer_id)"
		if name == TransformTruncate {
			what, example = "width", "truncate(10, product_code)"
		}
		if len(args) != 2 {
			return PartitionField{}, fmt.Errorf("%q: %s takes a %s and a column, e.g. %s", s, name, what, example)
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			if _, err2 := strconv.Atoi(args[1]); err2 == nil && isIdent(args[0]) {
				return PartitionField{}, fmt.Errorf("%q: the %s comes first: %s(%s, %s)", s, what, name, args[1], args[0])
			}
			return PartitionField{}, fmt.Errorf("%q: %s %q is not a whole number, e.g. %s", s, what, args[0], example)
		}
		if n < 1 || n > math.MaxInt32 {
			return PartitionField{}, fmt.Errorf("%q: %s %s must be from 1 to %d", s, name, what, math.MaxInt32)
		}
		if !isIdent(args[1]) {
			return PartitionField{}, fmt.Errorf("%q: %q is not a column name", s, args[1])
		}
		return PartitionField{Column: args[1], Transform: name, Param: n}, nil
	}
	transforms := []string{TransformYear, TransformMonth, TransformDay, TransformHour, TransformBucket, TransformTruncate}
	if sug, ok := suggest(name, transforms); ok {
		return PartitionField{}, fmt.Errorf("%q: unknown transform %q; did you mean %s?", s, name, sug)
	}
	return PartitionField{}, fmt.Errorf("%q: unknown transform %q; %s", s, name, partitionHelp)
}

// String is the canonical form that ParsePartition reads back: "col",
// "month(col)", "bucket(16, col)".
func (f PartitionField) String() string {
	switch f.Transform {
	case TransformIdentity, "":
		return f.Column
	case TransformBucket, TransformTruncate:
		return fmt.Sprintf("%s(%d, %s)", f.Transform, f.Param, f.Column)
	}
	return f.Transform + "(" + f.Column + ")"
}

// AcceptsType reports whether the transform can be applied to a column of
// type t: year, month and day take date, timestamp or timestamptz; hour
// takes timestamp or timestamptz; bucket takes int, long, string, date or
// decimal; truncate takes int, long, string or decimal; identity takes any
// type but double (one partition per distinct float is never meant) and
// binary. Unknown (not yet inferred) is never accepted.
func (f PartitionField) AcceptsType(t Type) bool {
	switch f.Transform {
	case TransformIdentity, "":
		return t.Kind != Unknown && t.Kind != Double && t.Kind != Binary
	case TransformYear, TransformMonth, TransformDay:
		return t.IsTemporal()
	case TransformHour:
		return t.Kind == Timestamp || t.Kind == TimestampTZ
	case TransformBucket:
		switch t.Kind {
		case Int, Long, String, Date, Decimal:
			return true
		}
	case TransformTruncate:
		switch t.Kind {
		case Int, Long, String, Decimal:
			return true
		}
	}
	return false
}

// acceptedTypes describes what AcceptsType takes, for messages.
func (f PartitionField) acceptedTypes() string {
	switch f.Transform {
	case TransformYear, TransformMonth, TransformDay:
		return "a date, timestamp or timestamptz column"
	case TransformHour:
		return "a timestamp or timestamptz column"
	case TransformBucket:
		return "an int, long, string, date or decimal column"
	case TransformTruncate:
		return "an int, long, string or decimal column"
	}
	return "a column that is not double or binary"
}

// isTime reports whether the transform is one of year, month, day, hour.
func (f PartitionField) isTime() bool {
	switch f.Transform {
	case TransformYear, TransformMonth, TransformDay, TransformHour:
		return true
	}
	return false
}

// isIdent reports whether s is a name: a letter or _ followed by letters,
// digits and _.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
