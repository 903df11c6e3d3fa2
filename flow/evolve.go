package flow

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/gates"
	"github.com/lima-lake/lima/reports"
)

// icebergCatalog opens the workspace's Iceberg catalog for reading table
// metadata; nil when the plan writes Hive-style Parquet or when the
// embedded catalog has not been created yet (no table exists).
func icebergCatalog(ctx context.Context, ws Workspace, p *plan.Plan) (*icesink.Sink, error) {
	if p.Pattern() == plan.PatternHive {
		return nil, nil
	}
	if p.Catalog() == plan.CatalogSQLite {
		if _, err := os.Stat(ws.CatalogPath(p)); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	sk, err := OpenPlanSink(ctx, ws, p, nil)
	if err != nil {
		return nil, err
	}
	ice, ok := sk.(*icesink.Sink)
	if !ok {
		sk.Close()
		return nil, nil
	}
	return ice, nil
}

// loadLakeTable loads a table's metadata; nil when it does not exist.
func loadLakeTable(ctx context.Context, sk *icesink.Sink, p *plan.Plan, name string) (*table.Table, error) {
	tbl, err := sk.Catalog().LoadTable(ctx, table.Identifier{p.Namespace(), name})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	return tbl, err
}

// CheckEvolution is gate 3's comparison of the plan with the tables that
// already exist in the lake: every difference is either Iceberg schema and
// spec evolution the next commit applies, or refused (see
// gates.EvolutionFindings). rewrite names the tables the approver allows
// to be rewritten under an incompatible schema by a full refresh.
//
// A catalog that cannot be reached is not a refusal: the finding warns, and
// the run compares again before it writes (an incompatible change is
// refused there, before anything is visible).
func CheckEvolution(ctx context.Context, ws Workspace, p *plan.Plan, rewrite []string) ([]gates.Finding, error) {
	unchecked := func(err error) []gates.Finding {
		return []gates.Finding{{Name: "schema evolution", Status: gates.Warn,
			Detail: "the plan was not compared with the tables in the lake (" + err.Error() + "); the next run compares before it writes and refuses a change the data cannot follow"}}
	}
	sk, err := icebergCatalog(ctx, ws, p)
	if err != nil {
		return unchecked(err), nil
	}
	if sk == nil {
		return nil, nil
	}
	defer sk.Close()
	var evs []gates.TableEvolution
	for _, name := range p.TableNames() {
		t := p.Tables[name]
		if t == nil || len(t.Columns) == 0 {
			continue // columns inferred at the run
		}
		tbl, err := loadLakeTable(ctx, sk, p, name)
		if err != nil {
			return unchecked(err), nil
		}
		if tbl == nil {
			continue
		}
		fields, err := t.Fields()
		if err != nil {
			return nil, err
		}
		part, err := t.PartitionSpec()
		if err != nil {
			return nil, err
		}
		ev, err := icesink.Diff(tbl.Schema(), tbl.Spec(), fields, part)
		if err != nil {
			return nil, err
		}
		if ev.Empty() {
			continue
		}
		te := gates.TableEvolution{Table: name, Mode: t.Mode()}
		for _, c := range ev.Changes {
			te.Changes = append(te.Changes, c.String())
		}
		for _, c := range ev.Rewrite {
			te.Rewrite = append(te.Rewrite, c.String())
		}
		for _, r := range rewrite {
			if r == name {
				te.RewriteApproved = true
			}
		}
		evs = append(evs, te)
	}
	return gates.EvolutionFindings(evs), nil
}

// withLakeMetadata replaces the schema of each table in lake by what the
// table's Iceberg metadata says (columns, types, nullability, partition
// spec), so the generated docs describe the table, never the plan's hopes.
// Best effort: a table whose metadata cannot be read keeps what the run saw.
func withLakeMetadata(ctx context.Context, ws Workspace, p *plan.Plan, lake []reports.LakeTable) []reports.LakeTable {
	sk, err := icebergCatalog(ctx, ws, p)
	if err != nil || sk == nil {
		return lake
	}
	defer sk.Close()
	for i := range lake {
		tbl, err := loadLakeTable(ctx, sk, p, lake[i].Name)
		if err != nil || tbl == nil {
			continue
		}
		d := icesink.Describe(tbl)
		lake[i].Columns, lake[i].Types, lake[i].Required = d.Columns, d.Types, d.Required
		lake[i].Partition = d.Partition
		if lake[i].Partition == nil {
			lake[i].Partition = []string{}
		}
		lake[i].FromMetadata = true
	}
	return lake
}
