package flow

import (
	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/gates"
)

// addUpsertCheck adds gate 4's key equality of an upsert that compared
// keys with the source (gates.UpsertKeys) to the table's reconciliation.
func addUpsertCheck(rec *gates.Reconciliation, tr *run.TableResult) {
	if rec == nil || tr == nil {
		return
	}
	f := gates.UpsertKeys(tr.Upsert, tr.RowsQuarantined, rec.LakeRows)
	if f == nil {
		return
	}
	rec.Checks = append(rec.Checks, *f)
	if f.Status == gates.Fail {
		rec.Status = gates.Fail
	}
}
