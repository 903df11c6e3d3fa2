package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Dirt rates of the generated inspections file. They follow the demo's
// inspections sample (engine/demo/data/erp) at the rates an SAP export shows.
const (
	rateNullDate     = 0.01   // literal NULL in inspected_on
	rateSlashDate    = 0.10   // yyyy/M/d instead of yyyy-MM-dd
	rateTrailingNeg  = 0.10   // negative cost written 150.000-
	rateGroupedLot   = 0.60   // lot_qty ≥ 1000 written "1,200" (quoted)
	rateZeroPadded   = 0.55   // supplier_id written 0010010015
	rateSpacePadded  = 0.15   // supplier_id written " 10010017"
	rateBadRow       = 0.0005 // unparseable number or impossible date
	rateMultiline    = 0.0001 // quoted inspector with an embedded newline
	rateFail         = 0.08   // result FAIL
	suppliersInPool  = 2000
	firstInspection  = 1_000_001
	firstDay         = "2024-01-01"
	daysSpanned      = 912 // 2024-01 … 2026-06: 30 monthly partitions at any row count
	csvHeader        = "inspection_id,supplier_id,inspected_on,lot_qty,defect_qty,cost,result,inspector\n"
	benchSeed1       = 20260101
	benchSeed2       = 0x11a1a
	genBufferBytes   = 1 << 20
	groupedCostLimit = 1000_000 // milli-units: costs ≥ 1,000.000 are written grouped and quoted
)

var inspectors = []string{
	"J. Park", "S. Lee", "M. Weber", "K. Sato", "A. Martin", "H. Kim", "Y. Choi", "T. Müller",
	"L. Dubois", "R. Tanaka", "E. Fischer", "D. Jung", "C. Bernard", "N. Yamamoto", "P. Schmidt",
	"B. Kang", "F. Moreau", "G. Suzuki", `"Weber, M."`, `"Park, J."`,
}

// genStats counts what the generator wrote, so the report can say which dirt
// the input holds and how many rows a careful loader must hold back.
type genStats struct {
	Rows          int64
	Bytes         int64
	NullDates     int64
	SlashDates    int64
	TrailingMinus int64
	Grouped       int64 // fields with a thousands separator (lot_qty or cost)
	PaddedIDs     int64 // zero- or space-padded supplier ids
	Multiline     int64
	BadNumbers    int64
	BadDates      int64
}

// BadRows is the number of rows planted so that no type can hold them.
func (g genStats) BadRows() int64 { return g.BadNumbers + g.BadDates }

// generateCSV writes rows inspection records to path. The output depends only
// on rows: the random source has a fixed seed.
func generateCSV(path string, rows int64) (genStats, error) {
	var st genStats
	f, err := os.Create(path)
	if err != nil {
		return st, err
	}
	w := bufio.NewWriterSize(f, genBufferBytes)
	rng := rand.New(rand.NewPCG(benchSeed1, benchSeed2))
	day0, _ := time.Parse(time.DateOnly, firstDay)
	w.WriteString(csvHeader)

	buf := make([]byte, 0, 256)
	for i := int64(0); i < rows; i++ {
		buf = buf[:0]
		// inspection_id: unique and increasing, as an ERP export lists them.
		buf = strconv.AppendInt(buf, firstInspection+i, 10)
		buf = append(buf, ',')

		// supplier_id: 8-digit SAP vendor numbers, padded three ways.
		sup := int64(10010000 + rng.IntN(suppliersInPool))
		switch p := rng.Float64(); {
		case p < rateZeroPadded:
			buf = append(buf, "00"...)
			st.PaddedIDs++
		case p < rateZeroPadded+rateSpacePadded:
			buf = append(buf, ' ')
			st.PaddedIDs++
		}
		buf = strconv.AppendInt(buf, sup, 10)
		buf = append(buf, ',')

		// Which bad row, if any: half unparseable costs, half impossible dates.
		badNumber, badDate := false, false
		if rng.Float64() < rateBadRow {
			if rng.IntN(2) == 0 {
				badNumber = true
				st.BadNumbers++
			} else {
				badDate = true
				st.BadDates++
			}
		}

		// inspected_on: follows the id (export order) with a few days of jitter.
		d := int(i*daysSpanned/max(rows, 1)) + rng.IntN(7) - 3
		d = min(max(d, 0), daysSpanned-1)
		day := day0.AddDate(0, 0, d)
		switch p := rng.Float64(); {
		case badDate:
			// A day the month does not have: 2026-02-30, 2025-04-31, 2024-06-31.
			months := [...]struct{ m, d int }{{2, 30}, {4, 31}, {6, 31}, {9, 31}, {11, 31}}
			md := months[rng.IntN(len(months))]
			buf = fmt.Appendf(buf, "%04d-%02d-%02d", day.Year(), md.m, md.d)
		case p < rateNullDate:
			buf = append(buf, "NULL"...)
			st.NullDates++
		case p < rateNullDate+rateSlashDate:
			buf = fmt.Appendf(buf, "%d/%d/%d", day.Year(), int(day.Month()), day.Day())
			st.SlashDates++
		default:
			buf = day.AppendFormat(buf, time.DateOnly)
		}
		buf = append(buf, ',')

		// lot_qty: mostly small lots, some large ones grouped "1,200".
		lot := int64(50 + int(rng.ExpFloat64()*600))
		if lot >= 1000 && rng.Float64() < rateGroupedLot {
			buf = appendGrouped(buf, lot, -1)
			st.Grouped++
		} else {
			buf = strconv.AppendInt(buf, lot, 10)
		}
		buf = append(buf, ',')

		// defect_qty: never negative (the plan checks range min 0).
		defects := int64(rng.IntN(int(lot/40) + 1))
		buf = strconv.AppendInt(buf, defects, 10)
		buf = append(buf, ',')

		// cost: decimal(18,3) in KRW thousands; SAP writes negatives 150.000-.
		milli := min(int64(rng.ExpFloat64()*400_000), 999_999_999)
		neg := rng.Float64() < rateTrailingNeg
		switch {
		case badNumber:
			buf = fmt.Appendf(buf, "%dx.%02d", milli/100_000+1, milli%100)
		case milli >= groupedCostLimit:
			buf = appendGrouped(buf, milli/1000, milli%1000)
			if neg {
				// "1,000.000-": the minus stays inside the quotes.
				buf = append(buf[:len(buf)-1], '-', '"')
			}
			st.Grouped++
		default:
			buf = strconv.AppendInt(buf, milli/1000, 10)
			buf = fmt.Appendf(buf, ".%03d", milli%1000)
			if neg {
				buf = append(buf, '-')
			}
		}
		if neg && !badNumber {
			st.TrailingMinus++
		}
		buf = append(buf, ',')

		// result
		if rng.Float64() < rateFail {
			buf = append(buf, "FAIL"...)
		} else {
			buf = append(buf, "PASS"...)
		}
		buf = append(buf, ',')

		// inspector: some quoted with a comma, a rare one with a line break.
		name := inspectors[rng.IntN(len(inspectors))]
		if rng.Float64() < rateMultiline {
			buf = append(buf, `"S. Lee`+"\n"+`(night shift)"`...)
			st.Multiline++
		} else {
			buf = append(buf, name...)
		}
		buf = append(buf, '\n')

		if _, err := w.Write(buf); err != nil {
			f.Close()
			return st, err
		}
		st.Rows++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return st, err
	}
	if err := f.Close(); err != nil {
		return st, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return st, err
	}
	st.Bytes = fi.Size()
	return st, nil
}

// appendGrouped writes a quoted number with thousands separators: "1,250.500"
// (milli ≥ 0) or "1,200" (milli < 0: an integer).
func appendGrouped(buf []byte, whole, milli int64) []byte {
	s := strconv.FormatInt(whole, 10)
	buf = append(buf, '"')
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, s[i])
	}
	if milli >= 0 {
		buf = fmt.Appendf(buf, ".%03d", milli)
	}
	return append(buf, '"')
}

// benchPlan is platform.yaml for the bench workspace: the demo's inspections
// table (engine/demo/platform.yaml) reading one large file. The gates are
// left empty; writeWorkspace records them with `lima-tui approve`, so the
// plan hash is whatever the product computes.
const benchPlan = `# Lima bench plan — written by bench/ (go run .), modelled on the demo's
# inspections table (engine/demo/platform.yaml). Approved by "bench".
schema_version: 1
platform:
  prefix: bench
  region: local
  environment: bench
  pattern: iceberg
  catalog: sqlite
downstream:
  consumer: unknown
storage:
  warehouse: lake
  namespace: bench
sources:
  erp:
    kind: files
    path: data
tables:
  inspections:
    type: base
    description: Incoming quality inspections (generated by bench/, %d rows)
    source:
      name: erp
      files: [inspections.csv]
    columns:
      - {name: inspection_id, type: long, required: true}
      - {name: supplier_id, type: string, required: true, normalize: [trim, "zero_pad:10"]}
      - {name: inspected_on, type: date, formats: [yyyy-MM-dd, yyyy/M/d]}
      - {name: lot_qty, type: long}
      - {name: defect_qty, type: int}
      - {name: cost, type: "decimal(18,3)", description: "inspection cost in KRW thousands; SAP writes negatives with a trailing minus"}
      - {name: result, type: string}
      - {name: inspector, type: string}
    partition: ["month(inspected_on)"]
    load: {mode: full, keys: [inspection_id], watermark: inspected_on}
    checks:
      - {rule: allowed, column: result, values: [PASS, FAIL]}
      - {rule: range, column: defect_qty, min: 0}
    control_columns: [lot_qty, defect_qty, cost]
    written_by: lima
etl:
  tool: lima
  max_parallel_reads: 2
owners:
  - {name: "Bench (generated data)", default: true, deadline: 24h}
`

// workspace is one generated Lima workspace: the CSV and the approved plan.
type workspace struct {
	Dir  string
	CSV  string
	Plan string
	Gen  genStats
}

// writeWorkspace creates dir (removing an earlier one: a full load of an
// already-loaded input would be skipped), generates the CSV, writes the plan
// and approves gates 1 and 3 with the product binary.
func writeWorkspace(dir string, rows int64, lima string) (*workspace, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	ws := &workspace{
		Dir:  dir,
		CSV:  filepath.Join(dir, "data", "inspections.csv"),
		Plan: filepath.Join(dir, "platform.yaml"),
	}
	var err error
	if ws.Gen, err = generateCSV(ws.CSV, rows); err != nil {
		return nil, fmt.Errorf("generate %s: %w", ws.CSV, err)
	}
	if err := os.WriteFile(ws.Plan, fmt.Appendf(nil, benchPlan, rows), 0o644); err != nil {
		return nil, err
	}
	for _, gate := range []string{"scope", "data-model"} {
		if out, err := runQuiet(lima, "approve", "--gate", gate, "--by", "bench", "--plan", ws.Plan); err != nil {
			return nil, fmt.Errorf("lima-tui approve --gate %s: %w\n%s", gate, err, out)
		}
	}
	return ws, nil
}
