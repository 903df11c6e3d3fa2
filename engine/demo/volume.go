package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lima-lake/lima/internal/fsx"
)

// VolumeFile is the generated inspections file `demo --rows N` adds beside
// the sample (it matches the demo plan's inspections_*.csv).
const VolumeFile = "inspections_volume.csv"

// VolumeTruth is what a generated volume file holds, worked out while it is
// written (not by reading it back): the rows a correct load accepts, the
// rows it must hold back by rule, and the accepted rows' control totals.
type VolumeTruth struct {
	Rows     int64
	Accepted int64
	Held     map[string]int64 // rule (type, allowed, expression) → rows
	// Sums of the accepted rows: lot_qty, defect_qty, and cost in
	// thousandths (cost has scale 3 in the demo plan).
	LotQty, DefectQty, CostMilli int64
}

// The ids of the demo's suppliers as the ERP writes them (padded,
// unpadded, space-padded); every one exists in suppliers.csv.
var volumeSuppliers = []string{"0010010015", "10010016", " 10010017", "0010010018", "10010019", "0010010020", "10010021"}

var volumeInspectors = []string{"J. Park", "S. Lee", "M. Weber", "K. Sato", "A. Dubois"}

// WriteVolume writes n generated inspection rows to the demo workspace's
// data/erp/inspections_volume.csv (atomically; the same n gives the same
// bytes, and a file that already holds them is not touched, so a rerun
// finds it already loaded). The rows are dirty the
// way the sample is — padded supplier ids, two date layouts, SAP trailing
// minus, thousands separators — and about one in 2,500 is wrong in a way
// the plan holds back (an impossible date, a result outside PASS/FAIL, more
// defects than the lot). Ids start at 1,000,000 so they never meet the
// sample's. n ≤ 0 writes nothing.
func WriteVolume(dir string, n int64) (VolumeTruth, error) {
	return WriteVolumeContext(context.Background(), dir, n)
}

// MaxVolumeRows bounds WriteVolume's n: 100 million rows are about 6 GB
// and some 17 CPU-minutes of loading; more is no demo.
const MaxVolumeRows = 100_000_000

// WriteVolumeContext is WriteVolume ending early, with ctx's error, when
// ctx is done (ctrl+c or SIGTERM during the generation).
func WriteVolumeContext(ctx context.Context, dir string, n int64) (VolumeTruth, error) {
	if n > MaxVolumeRows {
		return VolumeTruth{Held: map[string]int64{}}, fmt.Errorf("%d rows is more than the %d a demo volume holds", n, int64(MaxVolumeRows))
	}
	if n <= 0 {
		return VolumeTruth{Held: map[string]int64{}}, nil
	}
	path := filepath.Join(dir, "data", "erp", VolumeFile)
	// Leave a file that already holds these bytes alone: rewriting it would
	// change its modification time, and a full-mode table reloads input
	// that looks changed.
	h := sha256.New()
	truth, err := writeVolume(ctx, h, n)
	if err != nil {
		return truth, err
	}
	if f, err := os.Open(path); err == nil {
		old, err := fsx.SHA256(f)
		f.Close()
		if err == nil && old == hex.EncodeToString(h.Sum(nil)) {
			return truth, nil
		}
	}
	err = fsx.WriteAtomic(path, func(w io.Writer) error {
		var err error
		truth, err = writeVolume(ctx, w, n)
		return err
	})
	return truth, err
}

func writeVolume(ctx context.Context, w io.Writer, n int64) (VolumeTruth, error) {
	t := VolumeTruth{Rows: n, Held: map[string]int64{}}
	r := rand.New(rand.NewPCG(uint64(n), 0x11a1a))
	if _, err := io.WriteString(w, "inspection_id,supplier_id,inspected_on,lot_qty,defect_qty,cost,result,inspector\n"); err != nil {
		return t, err
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const days = 730 // 2025-01-01 … 2026-12-31: 24 monthly partitions
	buf := make([]byte, 0, 128)
	for i := int64(0); i < n; i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			return t, ctx.Err()
		}
		buf = buf[:0]
		buf = strconv.AppendInt(buf, 1_000_000+i, 10)
		buf = append(buf, ',')
		buf = append(buf, volumeSuppliers[r.IntN(len(volumeSuppliers))]...)
		buf = append(buf, ',')
		bad := ""
		switch k := r.IntN(2500); k {
		case 0:
			bad = "type"
		case 1:
			bad = "allowed"
		case 2:
			bad = "expression"
		}
		d := start.AddDate(0, 0, r.IntN(days))
		switch {
		case bad == "type":
			buf = append(buf, "2026-02-30"...)
		case r.IntN(5) == 0:
			buf = fmt.Appendf(buf, "%d/%d/%d", d.Year(), int(d.Month()), d.Day())
		default:
			buf = d.AppendFormat(buf, "2006-01-02")
		}
		lot := int64(100 + r.IntN(1900))
		defects := int64(r.IntN(int(lot/50) + 1))
		if bad == "expression" {
			defects = lot + 1 + int64(r.IntN(10))
		}
		buf = append(buf, ',')
		if lot >= 1000 && r.IntN(4) == 0 {
			buf = fmt.Appendf(buf, "\"%d,%03d\"", lot/1000, lot%1000)
		} else {
			buf = strconv.AppendInt(buf, lot, 10)
		}
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, defects, 10)
		buf = append(buf, ',')
		// cost in thousandths: 0.000 … 4,999.999, negative one time in ten
		// (a credit note), written SAP-style with the minus behind.
		milli := int64(r.IntN(5_000_000))
		neg := r.IntN(10) == 0
		whole, frac := milli/1000, milli%1000
		if whole >= 1000 && r.IntN(3) == 0 {
			buf = fmt.Appendf(buf, "\"%d,%03d.%03d", whole/1000, whole%1000, frac)
			if neg {
				buf = append(buf, '-')
			}
			buf = append(buf, '"')
		} else {
			buf = fmt.Appendf(buf, "%d.%03d", whole, frac)
			if neg {
				buf = append(buf, '-')
			}
		}
		buf = append(buf, ',')
		switch {
		case bad == "allowed":
			buf = append(buf, "HOLD"...)
		case r.IntN(7) == 0:
			buf = append(buf, "FAIL"...)
		default:
			buf = append(buf, "PASS"...)
		}
		buf = append(buf, ',')
		buf = append(buf, volumeInspectors[r.IntN(len(volumeInspectors))]...)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return t, err
		}
		if bad != "" {
			t.Held[bad]++
			continue
		}
		t.Accepted++
		t.LotQty += lot
		t.DefectQty += defects
		if neg {
			milli = -milli
		}
		t.CostMilli += milli
	}
	return t, nil
}
