package dynamo

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/lima-lake/lima/engine/plan"
)

// Column is one attribute of a table as Lima reads it.
type Column struct {
	Name string
	// Type is the plan type: long, decimal(p,s), string, binary or boolean.
	Type string
	// Seen lists the DynamoDB types the profile found, sorted ("N", "S", …).
	Seen []string
	// Present is how many profiled items had the attribute (NULL included).
	Present int64
	// Key: "partition" or "sort" for the table's key attributes.
	Key string
	// Note says why the type is not the attribute type's plain mapping.
	Note string
}

// Profile collects the attribute types and number shapes of items.
type Profile struct {
	items int64
	attrs map[string]*attrProfile
}

type attrProfile struct {
	present  int64
	seen     map[string]bool
	integral bool // every N an integer that fits a long
	intDig   int  // most digits before the point
	scale    int  // most digits after the point
}

// NewProfile returns an empty profile.
func NewProfile() *Profile { return &Profile{attrs: map[string]*attrProfile{}} }

// Items is how many items were added.
func (p *Profile) Items() int64 { return p.items }

var maxLong = big.NewInt(math.MaxInt64)
var minLong = big.NewInt(math.MinInt64)

// Add profiles one item.
func (p *Profile) Add(item map[string]types.AttributeValue) {
	p.items++
	for name, v := range item {
		a := p.attrs[name]
		if a == nil {
			a = &attrProfile{seen: map[string]bool{}, integral: true}
			p.attrs[name] = a
		}
		a.present++
		t := typeOf(v)
		a.seen[t] = true
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			num, err := parseNumber(n.Value)
			if err != nil {
				a.seen["invalid N"] = true
				continue
			}
			if num.Scale > 0 || num.Mant.Cmp(maxLong) > 0 || num.Mant.Cmp(minLong) < 0 {
				a.integral = false
			}
			a.intDig = max(a.intDig, num.intDigits())
			a.scale = max(a.scale, num.Scale)
		}
	}
}

// Columns are the profiled attributes with their plan types: the key
// attributes first (partition key, then sort key), then the others by
// name. keys are the table's key schema (partition key first; may be
// empty for an export without its table's description).
func (p *Profile) Columns(keys []string) []Column {
	names := make([]string, 0, len(p.attrs))
	for n := range p.attrs {
		if !slices.Contains(keys, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []Column
	for i, k := range keys {
		c := p.column(k)
		c.Key = "partition"
		if i > 0 {
			c.Key = "sort"
		}
		out = append(out, c)
	}
	for _, n := range names {
		out = append(out, p.column(n))
	}
	return out
}

func (p *Profile) column(name string) Column {
	c := Column{Name: name}
	a := p.attrs[name]
	if a == nil {
		c.Type, c.Note = "string", "not seen in the profiled items"
		return c
	}
	c.Present = a.present
	for t := range a.seen {
		c.Seen = append(c.Seen, t)
	}
	sort.Strings(c.Seen)
	c.Type, c.Note = mapType(a)
	return c
}

// mapType maps the attribute types seen to a plan type.
func mapType(a *attrProfile) (string, string) {
	seen := []string{}
	for t := range a.seen {
		if t != TypeNULL {
			seen = append(seen, t)
		}
	}
	sort.Strings(seen)
	switch {
	case len(seen) == 0:
		return "string", "only NULL values in the profiled items"
	case len(seen) > 1:
		return "string", fmt.Sprintf("mixed attribute types (%s): read as text (numbers as decimal text, bytes as base64, sets, maps and lists as JSON)", strings.Join(seen, ", "))
	}
	switch seen[0] {
	case TypeS:
		return "string", ""
	case TypeB:
		return "binary", ""
	case TypeBOOL:
		return "boolean", ""
	case TypeN:
		if a.integral {
			return "long", ""
		}
		p := max(a.intDig+a.scale, 1)
		if p > plan.MaxDecimalPrecision {
			return "string", fmt.Sprintf("numbers need %d digits, above decimal's %d: read as exact decimal text", p, plan.MaxDecimalPrecision)
		}
		return (plan.Type{Kind: plan.Decimal, Precision: p, Scale: a.scale}).String(), ""
	case TypeSS, TypeNS, TypeBS:
		return "string", "a set, read as canonical JSON text (members sorted)"
	case TypeM, TypeL:
		return "string", "a map or list, read as canonical JSON text (keys sorted)"
	}
	return "string", "attribute values Lima does not know (" + seen[0] + "): read as text"
}
