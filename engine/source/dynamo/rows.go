package dynamo

import (
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// layout turns items into rows of fixed columns.
type layout struct {
	names  []string
	asText []bool // B as base64 (a column that is not binary)
}

func newLayout(names, planTypes []string) layout {
	l := layout{names: slices.Clone(names), asText: make([]bool, len(names))}
	for i := range names {
		l.asText[i] = i >= len(planTypes) || planTypes[i] != "binary"
	}
	return l
}

// row fills vals and nulls (len(names) each) from item. A missing
// attribute and NULL are nulls. A value that cannot be rendered (a number
// DynamoDB would not have stored) is returned as bad.
func (l layout) row(item map[string]types.AttributeValue, vals []string, nulls []bool) (bad string) {
	for i, n := range l.names {
		v, ok := item[n]
		if !ok {
			vals[i], nulls[i] = "", true
			continue
		}
		s, null, err := text(v, l.asText[i])
		if err != nil {
			bad = n + ": " + err.Error()
			vals[i], nulls[i] = "", true
			continue
		}
		vals[i], nulls[i] = s, null
	}
	return bad
}

// totals are what a source counted and summed itself, from the values as
// they arrived: items, and the exact sum of every N value by attribute.
type totals struct {
	mu    sync.Mutex
	items int64
	sums  map[string]*sum
}

// tally adds one item's numbers to a local accumulator (no lock).
type tally struct {
	items int64
	sums  map[string]*sum
}

func (t *tally) add(item map[string]types.AttributeValue, names []string) {
	t.items++
	if t.sums == nil {
		t.sums = map[string]*sum{}
	}
	for _, n := range names {
		v, ok := item[n].(*types.AttributeValueMemberN)
		if !ok {
			continue
		}
		num, err := parseNumber(v.Value)
		if err != nil {
			continue
		}
		s := t.sums[n]
		if s == nil {
			s = &sum{}
			t.sums[n] = s
		}
		s.add(num)
	}
}

func (t *totals) merge(x *tally) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items += x.items
	if t.sums == nil {
		t.sums = map[string]*sum{}
	}
	for n, s := range x.sums {
		d := t.sums[n]
		if d == nil {
			d = &sum{}
			t.sums[n] = d
		}
		d.add(number{Mant: &s.m, Scale: s.scale})
	}
	*x = tally{}
}

// ReadTotals implements source.Counter: the items read to the end of their
// units so far and the exact sum of each attribute's N values (plain
// decimal text; attributes without a number are absent).
func (t *totals) ReadTotals() (int64, map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{}
	for n, s := range t.sums {
		out[n] = s.String()
	}
	return t.items, out
}
