package gates

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/clean"
	"github.com/lima-lake/lima/engine/plan"
)

func editPlan() *plan.Plan {
	return &plan.Plan{Tables: map[string]*plan.Table{
		"orders": {Type: plan.TableBase, Columns: []plan.Column{{Name: "order_id", Type: "long"}, {Name: "customer_id", Type: "string"},
			{Name: "ordered_on", Type: "string"}, {Name: "amount", Type: "decimal(18,2)"}}, Load: plan.LoadSpec{Keys: []string{"order_id"}}},
		"customers": {Type: plan.TableBase, Columns: []plan.Column{{Name: "customer_id", Type: "string"}}, Load: plan.LoadSpec{Keys: []string{"customer_id"}}},
	}}
}

// TestApplyEditSetsWhatTheFindingsSuggest: each edit lands in the plan
// field it names, and the plan still validates its model.
func TestApplyEditSetsWhatTheFindingsSuggest(t *testing.T) {
	p := editPlan()
	if _, err := ApplyEdits(p, []string{"orders.ordered_on.formats=dd/MM/yyyy, yyyy-MM-dd", "orders.amount.type=decimal(12,3)",
		"orders.amount.currency=krw", "orders.customer_id.required=true", "orders.customer_id.references=customers.customer_id",
		"orders.key=order_id,customer_id", "orders.partition=month(ordered_on)"}); err != nil {
		t.Fatal(err)
	}
	o := p.Tables["orders"]
	d, _ := o.Column("ordered_on")
	a, _ := o.Column("amount")
	c, _ := o.Column("customer_id")
	if d.Type != "date" || !slices.Equal(d.Formats, []string{"dd/MM/yyyy", "yyyy-MM-dd"}) {
		t.Errorf("ordered_on: %+v, want date with the two formats in order", d)
	}
	if a.Type != "decimal(12,3)" || a.Currency != "KRW" || !c.Required {
		t.Errorf("amount %+v customer_id %+v", a, c)
	}
	if !slices.Equal(o.Load.Keys, []string{"order_id", "customer_id"}) || !slices.Equal(o.Partition, []string{"month(ordered_on)"}) {
		t.Errorf("key %v partition %v", o.Load.Keys, o.Partition)
	}
	if len(o.JoinKeys) != 1 || o.JoinKeys[0] != (plan.JoinKey{Column: "customer_id", References: "customers.customer_id"}) ||
		len(o.Checks) != 1 || o.Checks[0].Rule != plan.RuleReferences || o.Checks[0].References != "customers.customer_id" {
		t.Errorf("reference: joins %+v checks %+v", o.JoinKeys, o.Checks)
	}
	// none takes each back; a type that is no date drops the formats.
	if _, err := ApplyEdits(p, []string{"orders.customer_id.references=none", "orders.partition=none", "orders.key=order_id",
		"orders.amount.currency=none", "orders.ordered_on.type=string"}); err != nil {
		t.Fatal(err)
	}
	if len(o.JoinKeys)+len(o.Checks)+len(o.Partition) != 0 || a.Currency != "" || d.Formats != nil || !slices.Equal(o.Load.Keys, []string{"order_id"}) {
		t.Errorf("after none: %+v %+v %+v", o, a, d)
	}
}

// TestApplyEditRefusesAndChangesNothing: unknown names and values are
// refused with ErrEdit and leave the plan as it was.
func TestApplyEditRefusesAndChangesNothing(t *testing.T) {
	for _, s := range []string{"nope.key=a", "orders.nope.type=date", "orders.ordered_on.format=qq/zz", "orders.amount.type=decimal(50,2)",
		"orders.ordered_on.currency=USD", "orders.customer_id.references=orders.order_id", "orders.partition=day(amount)", "orders.key=order_id,order_id",
		"orders.customer_id.references=customers.nope", "orders.required=true", "orders.a.b.c=1"} {
		p := editPlan()
		before, _ := p.Marshal()
		_, err := ApplyEdits(p, []string{s})
		if !errors.Is(err, ErrEdit) {
			t.Errorf("%s: %v, want ErrEdit", s, err)
		}
		if after, _ := p.Marshal(); string(after) != string(before) {
			t.Errorf("%s changed the plan", s)
		}
	}
}

// TestPreviewCastsAsTheLoad: the preview counts the values and rows the
// caster holds back: worked out by hand below.
func TestPreviewCastsAsTheLoad(t *testing.T) {
	tb := &plan.Table{Columns: []plan.Column{{Name: "d", Type: "date"}, {Name: "amt", Type: "decimal(5,2)"}}}
	ev := &TableEvidence{Columns: []ColumnEvidence{
		{Profile: clean.ColumnProfile{Name: "d"}, Rows: []string{"2024-01-05", "05/01/2024", "13/02/2024", "2024-02-14"}},
		{Profile: clean.ColumnProfile{Name: "amt"}, Rows: []string{"999.99", "12.5", "1000.00", "-5"}},
	}}
	ev.Columns[0].Values, ev.Columns[1].Values = ev.Columns[0].Rows, ev.Columns[1].Rows
	// ISO only: rows 2 and 3 fail on the date, row 3 also on the amount
	// (1000.00 needs 6 digits of decimal(5,2)).
	held, n, err := PreviewTable(tb, ev)
	if err != nil || held != 2 || n != 4 {
		t.Errorf("ISO dates: %d of %d held (%v), want 2 of 4", held, n, err)
	}
	pv, err := PreviewColumn(tb, &tb.Columns[1], ev.Columns[1].Values)
	if err != nil || pv.Parsed != 3 || pv.Values != 4 || !slices.Equal(pv.Failed, []string{"1000.00"}) {
		t.Errorf("decimal(5,2) preview %+v (%v), want 3 of 4 with 1000.00 failing", pv, err)
	}
	if _, err := ApplyEdit(&plan.Plan{Tables: map[string]*plan.Table{"t": tb}}, Edit{Table: "t", Column: "d", Field: "formats", Value: "dd/MM/yyyy,yyyy-MM-dd"}); err != nil {
		t.Fatal(err)
	}
	// Only row 3's amount is left.
	if held, n, _ := PreviewTable(tb, ev); held != 1 || n != 4 {
		t.Errorf("with the formats: %d of %d held, want 1 of 4", held, n)
	}
	if h := HoldBackHeadline("t", 3, 4); h != "t: 3 of 4 sampled rows would be held back" {
		t.Errorf("headline %q", h)
	}
	if h := HoldBackHeadline("t", 2, 4); h != "" {
		t.Errorf("half is not most: %q", h)
	}
	if !strings.Contains(strings.Join(FormatCandidates(&tb.Columns[0], &ColumnEvidence{Profile: clean.ColumnProfile{
		Formats: map[string]int{"dd/MM/yyyy or MM/dd/yyyy": 4, "yyyy-MM-dd": 2}}}), ","), "yyyy-MM-dd") {
		t.Error("the profile's format is no candidate")
	}
}
