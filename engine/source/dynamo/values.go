package dynamo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute type names, as DynamoDB spells them.
const (
	TypeS    = "S"
	TypeN    = "N"
	TypeB    = "B"
	TypeBOOL = "BOOL"
	TypeNULL = "NULL"
	TypeSS   = "SS"
	TypeNS   = "NS"
	TypeBS   = "BS"
	TypeM    = "M"
	TypeL    = "L"
)

// typeOf is the DynamoDB type name of an attribute value ("" for an
// unknown member).
func typeOf(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return TypeS
	case *types.AttributeValueMemberN:
		return TypeN
	case *types.AttributeValueMemberB:
		return TypeB
	case *types.AttributeValueMemberBOOL:
		return TypeBOOL
	case *types.AttributeValueMemberNULL:
		return TypeNULL
	case *types.AttributeValueMemberSS:
		return TypeSS
	case *types.AttributeValueMemberNS:
		return TypeNS
	case *types.AttributeValueMemberBS:
		return TypeBS
	case *types.AttributeValueMemberM:
		return TypeM
	case *types.AttributeValueMemberL:
		return TypeL
	}
	return ""
}

// number is a DynamoDB number as an exact decimal: Mant × 10^-Scale.
type number struct {
	Mant  *big.Int
	Scale int
}

// parseNumber reads a DynamoDB number (up to 38 significant digits, an
// optional sign, fraction and exponent) exactly.
func parseNumber(s string) (number, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return number{}, errors.New("empty number")
	}
	exp := 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return number{}, fmt.Errorf("number %q: bad exponent", s)
		}
		exp, t = e, t[:i]
	}
	neg := false
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	intPart, frac, _ := strings.Cut(t, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return number{}, fmt.Errorf("%q is not a number", s)
	}
	m, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return number{}, fmt.Errorf("%q is not a number", s)
	}
	if neg {
		m.Neg(m)
	}
	scale := len(frac) - exp
	if scale < 0 {
		m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		scale = 0
	}
	n := number{Mant: m, Scale: scale}
	n.trim()
	return n, nil
}

// trim drops trailing fractional zeros (1.50 → 1.5, 2.0 → 2).
func (n *number) trim() {
	ten := big.NewInt(10)
	q, r := new(big.Int), new(big.Int)
	for n.Scale > 0 {
		q.QuoRem(n.Mant, ten, r)
		if r.Sign() != 0 {
			return
		}
		n.Mant.Set(q)
		n.Scale--
	}
}

// String is plain decimal text without an exponent.
func (n number) String() string {
	return formatScaled(n.Mant, n.Scale)
}

func formatScaled(m *big.Int, scale int) string {
	s := new(big.Int).Abs(m).String()
	neg := m.Sign() < 0
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// intDigits is how many digits the number has before the point (0 for |n| < 1).
func (n number) intDigits() int {
	s := new(big.Int).Abs(n.Mant).String()
	if n.Mant.Sign() == 0 {
		return 0
	}
	return max(0, len(s)-n.Scale)
}

// sum is an exact decimal running total.
type sum struct {
	m     big.Int
	scale int
}

func (s *sum) add(n number) {
	switch {
	case n.Scale > s.scale:
		s.m.Mul(&s.m, pow10(n.Scale-s.scale))
		s.scale = n.Scale
		s.m.Add(&s.m, n.Mant)
	case n.Scale < s.scale:
		s.m.Add(&s.m, new(big.Int).Mul(n.Mant, pow10(s.scale-n.Scale)))
	default:
		s.m.Add(&s.m, n.Mant)
	}
}

func (s *sum) String() string {
	n := number{Mant: new(big.Int).Set(&s.m), Scale: s.scale}
	n.trim()
	return n.String()
}

func pow10(k int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
}

// text is the value Lima reads for an attribute of a column of kind
// plan: S as is, N as plain decimal text, B as its bytes, BOOL as
// true/false; sets, maps and lists as canonical JSON (keys sorted, sets in
// sorted order, numbers exact, bytes base64). asText renders B as base64
// (a column of mixed types is a string column). null reports NULL.
func text(v types.AttributeValue, asText bool) (s string, null bool, err error) {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		return a.Value, false, nil
	case *types.AttributeValueMemberN:
		n, err := parseNumber(a.Value)
		if err != nil {
			return "", false, err
		}
		return n.String(), false, nil
	case *types.AttributeValueMemberB:
		if asText {
			return base64.StdEncoding.EncodeToString(a.Value), false, nil
		}
		return string(a.Value), false, nil
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(a.Value), false, nil
	case *types.AttributeValueMemberNULL:
		return "", true, nil
	}
	var b bytes.Buffer
	if err := canonicalJSON(&b, v); err != nil {
		return "", false, err
	}
	return b.String(), false, nil
}

// CanonicalJSON renders an attribute value as plain JSON with map keys
// sorted, set members sorted (strings and bytes bytewise, numbers by
// value), numbers as exact decimal text and bytes as base64: the same
// value always gives the same text.
func CanonicalJSON(v types.AttributeValue) (string, error) {
	var b bytes.Buffer
	err := canonicalJSON(&b, v)
	return b.String(), err
}

func canonicalJSON(b *bytes.Buffer, v types.AttributeValue) error {
	str := func(s string) {
		enc, _ := json.Marshal(s)
		b.Write(enc)
	}
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		str(a.Value)
	case *types.AttributeValueMemberN:
		n, err := parseNumber(a.Value)
		if err != nil {
			return err
		}
		b.WriteString(n.String())
	case *types.AttributeValueMemberB:
		str(base64.StdEncoding.EncodeToString(a.Value))
	case *types.AttributeValueMemberBOOL:
		b.WriteString(strconv.FormatBool(a.Value))
	case *types.AttributeValueMemberNULL:
		b.WriteString("null")
	case *types.AttributeValueMemberSS:
		ss := slices.Clone(a.Value)
		slices.Sort(ss)
		b.WriteByte('[')
		for i, s := range ss {
			if i > 0 {
				b.WriteByte(',')
			}
			str(s)
		}
		b.WriteByte(']')
	case *types.AttributeValueMemberNS:
		ns := make([]number, 0, len(a.Value))
		for _, s := range a.Value {
			n, err := parseNumber(s)
			if err != nil {
				return err
			}
			ns = append(ns, n)
		}
		slices.SortFunc(ns, func(x, y number) int {
			return new(big.Rat).SetFrac(x.Mant, pow10(x.Scale)).Cmp(new(big.Rat).SetFrac(y.Mant, pow10(y.Scale)))
		})
		b.WriteByte('[')
		for i, n := range ns {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.String())
		}
		b.WriteByte(']')
	case *types.AttributeValueMemberBS:
		bs := slices.Clone(a.Value)
		slices.SortFunc(bs, bytes.Compare)
		b.WriteByte('[')
		for i, x := range bs {
			if i > 0 {
				b.WriteByte(',')
			}
			str(base64.StdEncoding.EncodeToString(x))
		}
		b.WriteByte(']')
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(a.Value))
		for k := range a.Value {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			str(k)
			b.WriteByte(':')
			if err := canonicalJSON(b, a.Value[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case *types.AttributeValueMemberL:
		b.WriteByte('[')
		for i, x := range a.Value {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonicalJSON(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("unknown attribute type %T", v)
	}
	return nil
}

// DecodeItem reads one item in DynamoDB JSON ({"id":{"N":"1"},…}), as a
// DynamoDB export writes it inside {"Item":{…}}.
func DecodeItem(raw json.RawMessage) (map[string]types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	item := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := decodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		item[k] = av
	}
	return item, nil
}

func decodeValue(raw json.RawMessage) (types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("an attribute value has exactly one type, got %d", len(m))
	}
	for t, v := range m {
		switch t {
		case TypeS:
			var s string
			err := json.Unmarshal(v, &s)
			return &types.AttributeValueMemberS{Value: s}, err
		case TypeN:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			if _, err := parseNumber(s); err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case TypeB:
			var b []byte // base64 in JSON
			err := json.Unmarshal(v, &b)
			return &types.AttributeValueMemberB{Value: b}, err
		case TypeBOOL:
			var x bool
			err := json.Unmarshal(v, &x)
			return &types.AttributeValueMemberBOOL{Value: x}, err
		case TypeNULL:
			var x bool
			err := json.Unmarshal(v, &x)
			return &types.AttributeValueMemberNULL{Value: x}, err
		case TypeSS:
			var x []string
			err := json.Unmarshal(v, &x)
			return &types.AttributeValueMemberSS{Value: x}, err
		case TypeNS:
			var x []string
			if err := json.Unmarshal(v, &x); err != nil {
				return nil, err
			}
			for _, s := range x {
				if _, err := parseNumber(s); err != nil {
					return nil, err
				}
			}
			return &types.AttributeValueMemberNS{Value: x}, nil
		case TypeBS:
			var x [][]byte
			err := json.Unmarshal(v, &x)
			return &types.AttributeValueMemberBS{Value: x}, err
		case TypeM:
			item, err := DecodeItem(v)
			return &types.AttributeValueMemberM{Value: item}, err
		case TypeL:
			var xs []json.RawMessage
			if err := json.Unmarshal(v, &xs); err != nil {
				return nil, err
			}
			l := make([]types.AttributeValue, 0, len(xs))
			for _, x := range xs {
				av, err := decodeValue(x)
				if err != nil {
					return nil, err
				}
				l = append(l, av)
			}
			return &types.AttributeValueMemberL{Value: l}, nil
		default:
			return nil, fmt.Errorf("unknown attribute type %q", t)
		}
	}
	panic("unreachable")
}
