package gates

import (
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/source/sqldb"
)

// TestProposeDeleteDetection: gate 3 proposes delete detection for every
// database table it reads by key from a watermark — keys compared every
// run below DeleteCheckEveryRunRows estimated rows (and when the size is
// unknown), once a day (24h) from it — and the proposal validates.
func TestProposeDeleteDetection(t *testing.T) {
	stamped := sqldb.TableInfo{Schema: "sales", Name: "orders", PrimaryKey: []string{"id"}, Watermark: "updated_at", WatermarkReason: "indexed updated_at",
		Columns: []sqldb.ColumnInfo{{Name: "id", DBType: "bigint", PlanType: "long"}, {Name: "updated_at", DBType: "timestamptz", PlanType: "timestamptz"}}}
	counted := sqldb.TableInfo{Schema: "sales", Name: "events", PrimaryKey: []string{"id"}, Watermark: "id", WatermarkReason: "integer primary key",
		Columns: []sqldb.ColumnInfo{{Name: "id", DBType: "bigint", PlanType: "long"}, {Name: "v", DBType: "text", PlanType: "string", Nullable: true}}}
	keyless := counted
	keyless.PrimaryKey = nil
	for _, tc := range []struct {
		name       string
		ti         sqldb.TableInfo
		est        int64
		mode, want string
	}{
		{"small timestamped", stamped, 999_999, plan.ModeUpsert, plan.DetectEveryRun},
		{"large timestamped", stamped, 1_000_000, plan.ModeUpsert, "24h"},
		{"unknown size", stamped, -1, plan.ModeUpsert, plan.DetectEveryRun},
		{"small id watermark", counted, 10, plan.ModeUpsert, plan.DetectEveryRun},
		{"large id watermark", counted, 50_000_000, plan.ModeUpsert, "24h"},
		{"no key: read in full", keyless, 10, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti := tc.ti
			ti.RowEstimate = tc.est
			src := &plan.Source{Kind: plan.SourcePostgres, DSNEnv: "ERP_DSN"}
			tb, fs := proposeDBTable(ti.Name, "erp", src, ti, nil)
			if tb.Load.Mode != tc.mode || tb.Load.DetectDeletes != tc.want {
				t.Fatalf("mode %q detect_deletes %q, want %q %q", tb.Load.Mode, tb.Load.DetectDeletes, tc.mode, tc.want)
			}
			if tc.want != "" {
				var load Finding
				for _, f := range fs {
					if strings.HasSuffix(f.Name, ": load") {
						load = f
					}
				}
				if !strings.Contains(load.Detail, "detect_deletes "+tc.want) {
					t.Fatalf("the load finding does not say how deletes are found: %+v", load)
				}
			}
			p := &plan.Plan{SchemaVersion: plan.SchemaVersion, Platform: plan.Platform{Prefix: "g3", Catalog: plan.CatalogSQLite},
				Sources: map[string]*plan.Source{"erp": src}, Tables: map[string]*plan.Table{ti.Name: tb}}
			if err := p.Validate(); err != nil {
				t.Fatalf("the proposal does not validate: %v", err)
			}
		})
	}
}
