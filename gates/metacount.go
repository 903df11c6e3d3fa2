package gates

import (
	"context"
	"fmt"

	"github.com/lima-lake/lima/engine/sink"
)

// MetaCount is gate 4's check that the table's metadata tells the truth:
// the live row count its manifests imply (records of the live data files
// minus records of the live delete files — what an engine that trusts
// metadata answers for count(*)) equals the rows read back. A position
// deleted twice, or a delete file left pointing at a removed data file,
// makes them differ. snapshotID is the snapshot read (0: the current one).
// ok is false when the sink states no metadata count.
func MetaCount(ctx context.Context, sc sink.Scanner, snapshotID, read int64) (f Finding, ok bool) {
	mc, is := sc.(sink.MetaCounter)
	if !is {
		return Finding{}, false
	}
	f = Finding{Name: "metadata row count"}
	m, err := mc.MetaRows(ctx, snapshotID)
	if err != nil {
		f.Status, f.Detail = Fail, fmt.Sprintf("the manifests could not be read: %v", err)
		f.Fix = "check the table's metadata files in the warehouse"
		return f, true
	}
	f.Detail = fmt.Sprintf("manifests: %d rows in %d data file(s) − %d delete record(s) in %d delete file(s) = %d live; a reader reads %d",
		m.DataRows, m.DataFiles, m.DeleteRecords, m.DeleteFiles, m.Live(), read)
	if m.DanglingDeleteFiles > 0 {
		f.Detail += fmt.Sprintf("; %d delete file(s) point at removed data files", m.DanglingDeleteFiles)
	}
	f.Status = Pass
	if m.Live() != read || m.DanglingDeleteFiles > 0 {
		f.Status = Fail
		f.Fix = "engines that trust metadata counts get a wrong number: run `lima-tui compact` (it drops dead delete files and rewrites files with deletes)"
	}
	return f, true
}
