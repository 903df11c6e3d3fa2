package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lima-lake/lima/engine/source"
)

// benchCSV is rows of a simple 8-column file, about 100 bytes a row.
func benchCSV(rows int) []byte {
	var b bytes.Buffer
	b.WriteString("id,customer,country,amount,quantity,ordered_at,status,note\n")
	for i := 1; i < rows; i++ {
		fmt.Fprintf(&b, "%d,customer-%06d,DE,%d.%02d,%d,2024-01-%02dT10:%02d:00Z,shipped,\"note, %d\"\n",
			i, i%100000, i%10000, i%100, i%50, i%28+1, i%60, i)
	}
	return b.Bytes()
}

func BenchmarkCSV(b *testing.B) {
	const rows = 1_000_000
	data := benchCSV(rows)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := newCSVReader(context.Background(), bytes.NewReader(data), "bench.csv", source.Options{}, csvDefaults)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if row.Kind != source.Data && row.Kind != source.Header {
				b.Fatalf("row %d: %v %s", n+1, row.Kind, row.Reason)
			}
			n++
		}
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCSVFile reads the same file from disk through Source.Open and
// reports the heap in use at the end, which must not depend on the file's
// size.
func BenchmarkCSVFile(b *testing.B) {
	const rows = 1_000_000
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.csv"), benchCSV(rows), 0o644); err != nil {
		b.Fatal(err)
	}
	src := New(dir)
	units, err := src.List(context.Background(), []string{"*.csv"})
	if err != nil || len(units) != 1 {
		b.Fatal(units, err)
	}
	b.SetBytes(units[0].Size)
	b.ReportAllocs()
	b.ResetTimer()
	var heap uint64
	for i := 0; i < b.N; i++ {
		rr, err := src.Open(context.Background(), units[0], source.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := rr.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		rr.Close()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(heap)/(1<<20), "heapMiB")
}
