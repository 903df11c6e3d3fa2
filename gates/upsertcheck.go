package gates

import (
	"fmt"

	"github.com/lima-lake/lima/engine/run"
)

// UpsertKeys is gate 4's proof that an upsert that compared keys left the
// lake equal to the source by key: the lake snapshot (re-read, lakeRows)
// holds exactly one row per distinct key the source held in the read
// snapshot. Held-back rows make it undecidable (a held row's key may or
// may not have an older version in the lake), so it is then a warning.
// Nil when the load compared no keys.
func UpsertKeys(u *run.UpsertResult, held, lakeRows int64) *Finding {
	if u == nil || !u.DeletesChecked {
		return nil
	}
	f := &Finding{Name: "lake keys = source keys"}
	detail := fmt.Sprintf("the source held %d distinct keys in the read snapshot; the lake snapshot holds %d rows (%d deleted this run)", u.SourceKeys, lakeRows, u.Deleted)
	switch {
	case held > 0:
		f.Status, f.Detail = Warn, detail+fmt.Sprintf("; not decided: %d rows were held back, so their keys may keep an older version or none", held)
	case lakeRows == u.SourceKeys:
		f.Status, f.Detail = Pass, detail
	default:
		f.Status, f.Detail = Fail, detail
		f.Fix = "the lake and the source disagree on which keys exist: inspect the table history, then reload with --full-refresh"
	}
	return f
}
