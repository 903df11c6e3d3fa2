package migrate

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
)

// Values are compared as canonical text, the same on both paths whatever
// the physical type (int32 or int64, timestamp unit): integers in decimal,
// decimals with their scale, dates YYYY-MM-DD, timestamps RFC 3339 in UTC,
// floats shortest round-trip, binary in hex.

// canonPartValue is the canonical text of a partition folder value of
// type t; the null partition is hivesink.DefaultPartition.
func canonPartValue(t plan.Type, v string, null bool) (string, error) {
	if null {
		return hivesink.DefaultPartition, nil
	}
	switch t.Kind {
	case plan.Int, plan.Long:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not an integer", v)
		}
		return strconv.FormatInt(n, 10), nil
	case plan.Decimal:
		n, err := decimal128.FromString(strings.TrimSpace(v), int32(t.Precision), int32(t.Scale))
		if err != nil {
			return "", fmt.Errorf("%q is not a decimal(%d,%d)", v, t.Precision, t.Scale)
		}
		return n.ToString(int32(t.Scale)), nil
	case plan.Double:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a number", v)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case plan.Date:
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Errorf("%q is not a date (YYYY-MM-DD)", v)
		}
		return d.Format(time.DateOnly), nil
	case plan.Timestamp, plan.TimestampTZ:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.DateOnly} {
			if ts, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
				return ts.UTC().Format(time.RFC3339Nano), nil
			}
		}
		return "", fmt.Errorf("%q is not a timestamp", v)
	case plan.Boolean:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Errorf("%q is not a boolean", v)
		}
		return strconv.FormatBool(b), nil
	}
	return v, nil
}

// cellText is the canonical text of row i of arr; false for a null.
func cellText(arr arrow.Array, i int) (string, bool) {
	if arr.IsNull(i) {
		return "", false
	}
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), true
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32), true
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64), true
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), true
	case *array.Date32:
		return a.Value(i).ToTime().Format(time.DateOnly), true
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano), true
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), true
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), true
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i)), true
	}
	return arr.ValueStr(i), true
}

// summable: integer and decimal columns get exact sums.
func summable(dt arrow.DataType) (scale int32, ok bool) {
	switch t := dt.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return 0, true
	case *arrow.Decimal128Type:
		return t.Scale, true
	}
	return 0, false
}

func summableType(t plan.Type) (int32, bool) {
	switch t.Kind {
	case plan.Int, plan.Long:
		return 0, true
	case plan.Decimal:
		return int32(t.Scale), true
	}
	return 0, false
}

// addCell adds the value of row i to sum (an unscaled integer).
func addCell(sum *big.Int, arr arrow.Array, i int) {
	switch a := arr.(type) {
	case *array.Int8:
		sum.Add(sum, big.NewInt(int64(a.Value(i))))
	case *array.Int16:
		sum.Add(sum, big.NewInt(int64(a.Value(i))))
	case *array.Int32:
		sum.Add(sum, big.NewInt(int64(a.Value(i))))
	case *array.Int64:
		sum.Add(sum, big.NewInt(a.Value(i)))
	case *array.Decimal128:
		sum.Add(sum, a.Value(i).BigInt())
	}
}

// scaled writes an unscaled integer with scale digits after the point.
func scaled(n *big.Int, scale int32) string {
	if scale <= 0 {
		return n.String()
	}
	neg := n.Sign() < 0
	digits := new(big.Int).Abs(n).String()
	for int32(len(digits)) <= scale {
		digits = "0" + digits
	}
	out := digits[:int32(len(digits))-scale] + "." + digits[int32(len(digits))-scale:]
	if neg {
		out = "-" + out
	}
	return out
}

// rowHasher accumulates an order-free hash of a multiset of rows: the sum
// (mod 2^64) of the FNV-1a hash of each row's canonical text, columns in
// name order. Equal multisets of rows give equal sums; a changed, missing
// or extra row changes it (but for a 2^-64 chance).
type rowHasher struct{ sum uint64 }

func (h *rowHasher) add(cells []string, present []bool) {
	f := fnv.New64a()
	for i, c := range cells {
		if present[i] {
			f.Write([]byte{1})
			f.Write([]byte(c))
		} else {
			f.Write([]byte{0})
		}
		f.Write([]byte{0x1e})
	}
	h.sum += f.Sum64()
}
