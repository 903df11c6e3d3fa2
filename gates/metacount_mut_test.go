package gates

// Failing-side tests of MetaCount (issue 20, mutation testing): the
// manifests' live count against the rows read, one row either way, a
// dangling delete file alone, an unreadable manifest, a sink without
// metadata counts.

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lima-lake/lima/engine/sink"
)

// mutTMeta is a sink that states a metadata count.
type mutTMeta struct {
	m   sink.MetaRows
	err error
}

func (mutTMeta) Scan(context.Context, int64, []string) (iter.Seq2[arrow.RecordBatch, error], error) {
	return nil, errors.New("not read")
}

func (s mutTMeta) MetaRows(context.Context, int64) (sink.MetaRows, error) { return s.m, s.err }

// mutTNoMeta is a sink that states none.
type mutTNoMeta struct{ mutTMeta }

func (mutTNoMeta) MetaRows() {}

func TestMetaCountMut(t *testing.T) {
	ctx := context.Background()
	if f, ok := MetaCount(ctx, mutTNoMeta{}, 0, 5); ok {
		t.Errorf("a sink without metadata counts: %+v", f)
	}
	// 12 data rows - 2 delete records = 10 live.
	m := sink.MetaRows{DataFiles: 3, DataRows: 12, DeleteFiles: 1, DeleteRecords: 2}
	for _, c := range []struct {
		name     string
		read     int64
		dangling int
		want     string
	}{
		{"equal", 10, 0, Pass},
		{"one row more read", 11, 0, Fail},
		{"one row fewer read", 9, 0, Fail},
		{"equal, one dangling delete file", 10, 1, Fail},
		{"one more read and one dangling", 11, 1, Fail},
	} {
		mm := m
		mm.DanglingDeleteFiles = c.dangling
		f, ok := MetaCount(ctx, mutTMeta{m: mm}, 0, c.read)
		if !ok || f.Status != c.want || (c.want == Fail) != (f.Fix != "") {
			t.Errorf("%s: %v %+v, want %s", c.name, ok, f, c.want)
		}
		if !strings.Contains(f.Detail, "12 rows in 3 data file(s) − 2 delete record(s) in 1 delete file(s) = 10 live") {
			t.Errorf("%s: %q", c.name, f.Detail)
		}
		if strings.Contains(f.Detail, "point at removed data files") != (c.dangling > 0) {
			t.Errorf("%s: dangling %d: %q", c.name, c.dangling, f.Detail)
		}
	}
	f, ok := MetaCount(ctx, mutTMeta{err: errors.New("manifest gone")}, 0, 0)
	if !ok || f.Status != Fail || !strings.Contains(f.Detail, "manifest gone") || f.Fix == "" {
		t.Errorf("unreadable manifests: %v %+v", ok, f)
	}
}
