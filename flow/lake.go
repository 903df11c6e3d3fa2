package flow

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/gates"
)

// LakeTables is what gate 3's renames need to know of the lake: the tables
// of the plan's namespace that exist, each with its column names (Iceberg:
// the current schema; Hive-style: the columns the table was created with).
// A lake not created yet is empty. An error means the lake could not be
// read: a rename is then not applied (it could orphan a table's rows).
func LakeTables(ctx context.Context, ws Workspace, p *plan.Plan) (gates.Lake, error) {
	lake := gates.Lake{}
	if p.Pattern() == plan.PatternHive {
		wh := ws.Warehouse(p)
		if !hasScheme(wh) {
			if _, err := os.Stat(wh); errors.Is(err, fs.ErrNotExist) {
				return lake, nil
			}
		}
		sk, err := OpenPlanSink(ctx, ws, p, nil)
		if err != nil {
			return nil, err
		}
		defer sk.Close()
		hs, ok := sk.(*hivesink.Sink)
		if !ok {
			return nil, fmt.Errorf("the plan's sink is not Hive-style")
		}
		for _, name := range lakeCandidates(p) {
			cols, ok, err := hs.TableColumns(p.Namespace(), name)
			if err != nil {
				return nil, err
			}
			if ok {
				lake[name] = cols
			}
		}
		return lake, nil
	}
	sk, err := icebergCatalog(ctx, ws, p)
	if err != nil || sk == nil {
		return lake, err
	}
	defer sk.Close()
	for id, err := range sk.Catalog().ListTables(ctx, table.Identifier{p.Namespace()}) {
		if err != nil {
			if errors.Is(err, catalog.ErrNoSuchNamespace) {
				return lake, nil
			}
			return nil, err
		}
		if len(id) == 0 {
			continue
		}
		lake[id[len(id)-1]] = nil
	}
	for name := range lake {
		tbl, err := loadLakeTable(ctx, sk, p, name)
		if err != nil {
			return nil, err
		}
		if tbl == nil {
			continue
		}
		var cols []string
		for _, f := range tbl.Schema().Fields() {
			cols = append(cols, f.Name)
		}
		lake[name] = cols
	}
	return lake, nil
}

// lakeCandidates are the names a plan's tables may have in the lake: each
// table and its history table.
func lakeCandidates(p *plan.Plan) []string {
	var out []string
	for _, n := range p.TableNames() {
		out = append(out, n, plan.HistoryTable(n))
	}
	return out
}
