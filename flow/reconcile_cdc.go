package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
)

// cdcHistory is what gate 4 needs besides the table for a change-capture
// table: its history table, opened read-only (never created), from which
// gate 4 recomputes the applied state. For other modes: nothing.
func cdcHistory(ctx context.Context, sk sink.Sink, p *plan.Plan, e gates.Expectation) []gates.Option {
	if e.Mode != plan.ModeCDC {
		return nil
	}
	name := plan.HistoryTable(e.Table)
	ice, ok := sk.(*icesink.Sink)
	if !ok {
		return []gates.Option{gates.WithoutChangeHistory("the sink is not an Iceberg catalog, so " + name + " cannot be read")}
	}
	tbl, err := ice.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return []gates.Option{gates.WithoutChangeHistory("the table has no history table " + name)}
	}
	if err != nil {
		return []gates.Option{gates.WithoutChangeHistory(fmt.Sprintf("%s cannot be opened: %v", name, err))}
	}
	// The spec is the history's own schema, so opening it evolves nothing
	// (and gate 4 commits nothing).
	spec := sink.TableSpec{Name: name, Namespace: p.Namespace()}
	for _, f := range tbl.Schema().Fields() {
		t, err := plan.ParseType(icesink.TypeName(f.Type))
		if err != nil {
			return []gates.Option{gates.WithoutChangeHistory(fmt.Sprintf("%s: column %s: %v", name, f.Name, err))}
		}
		spec.Columns = append(spec.Columns, plan.Column{Name: f.Name, Type: t.String()})
		spec.Types = append(spec.Types, t)
		spec.Required = append(spec.Required, f.Required)
	}
	h, err := ice.OpenTable(ctx, spec)
	if err != nil {
		return []gates.Option{gates.WithoutChangeHistory(fmt.Sprintf("%s cannot be opened: %v", name, err))}
	}
	ch, ok := h.(gates.ChangeHistory)
	if !ok {
		return []gates.Option{gates.WithoutChangeHistory("the sink cannot read " + name + " back")}
	}
	return []gates.Option{gates.WithChangeHistory(name, ch)}
}
