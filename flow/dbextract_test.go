package flow_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/run"
	"github.com/lima-lake/lima/engine/sink/rawland"
	"github.com/lima-lake/lima/engine/source/sqldb"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/s3test"
)

// decodeExtract parses the landed CSV on its own (RFC 4180): a quoted
// field is a value, an empty unquoted field is NULL. It returns the
// header and the rows, NULL as nil.
func decodeExtract(t *testing.T, gz []byte) ([]string, [][]*string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]*string
	var rec []*string
	i := 0
	for i < len(b) {
		// one field
		if b[i] == '"' {
			var sb strings.Builder
			i++
			for {
				if i >= len(b) {
					t.Fatal("unterminated quoted field")
				}
				if b[i] == '"' {
					if i+1 < len(b) && b[i+1] == '"' {
						sb.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				sb.WriteByte(b[i])
				i++
			}
			s := sb.String()
			rec = append(rec, &s)
		} else {
			j := i
			for j < len(b) && b[j] != ',' && b[j] != '\r' {
				j++
			}
			if j != i {
				t.Fatalf("unquoted value %q: every value must be quoted", b[i:j])
			}
			rec = append(rec, nil)
		}
		switch {
		case i < len(b) && b[i] == ',':
			i++
			if i == len(b) || b[i] == '\r' {
				rec = append(rec, nil) // a trailing NULL
			}
			if i < len(b) && b[i] == '\r' {
				goto eol
			}
			continue
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			goto eol
		default:
			t.Fatalf("bad CSV at byte %d", i)
		}
	eol:
		i += 2
		recs = append(recs, rec)
		rec = nil
	}
	if len(recs) == 0 {
		t.Fatal("no header")
	}
	var hdr []string
	for _, h := range recs[0] {
		hdr = append(hdr, *h)
	}
	return hdr, recs[1:]
}

// extracts lists the landed extract files under raw/erp/<table>.
func extracts(t *testing.T, wh, table string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(wh, "raw", "erp", table, "load_date=*", "*", rawland.ExtractName))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// itemsTable creates the source table in a fresh schema and returns it
// with the source rows as the test reads them (ordered by id), in the
// reader's text forms.
func itemsTable(t *testing.T) (schema string, db *sql.DB, want func() [][]*string) {
	dsn, db := serviceDSN(t, sqldb.Postgres, "LIMA_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	schema = randomName("lima_extract_")
	dbExec(t, db, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`) })
	dbExec(t, db, `CREATE TABLE `+schema+`.items (id bigint PRIMARY KEY, n numeric(12,4), at timestamptz, b bytea, s text)`)
	dbExec(t, db, `INSERT INTO `+schema+`.items VALUES
		(1, 1.5, '2026-03-09 23:30:00.123456+01', '\x00ff22'::bytea, ''),
		(2, NULL, NULL, NULL, NULL),
		(3, -0.0100, '1999-12-31 23:59:59+00', '\x'::bytea, 'say "hi", then'||chr(13)||chr(10)||'bye'),
		(4, 12345678.0000, '2026-01-01 00:00:00+00', '\x2c0d0a'::bytea, 'ümlaut, é')`)
	t.Setenv("LIMA_TEST_SOURCE_DSN", dsn)
	want = func() [][]*string {
		rows, err := db.QueryContext(context.Background(), `SELECT id::text, n::text,
			to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), b, s
			FROM `+schema+`.items ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][]*string
		for rows.Next() {
			var id, n, at, s *string
			var b []byte
			if err := rows.Scan(&id, &n, &at, &b, &s); err != nil {
				t.Fatal(err)
			}
			var bs *string
			if b != nil {
				x := string(b)
				bs = &x
			}
			out = append(out, []*string{id, n, at, bs, s})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return schema, db, want
}

func itemsPlan(schema, storage string) string {
	return `schema_version: 1
platform: {prefix: pgraw}
storage: ` + storage + `
sources:
  erp: {kind: postgres, dsn_env: LIMA_TEST_SOURCE_DSN}
tables:
  items:
    source: {name: erp, table: items, schema: ` + schema + `}
    load: {mode: incremental, keys: [id], watermark: id}
`
}

// verifyExtract compares a landed extract (body) and its manifest with
// the source rows: header, count, every value (NULL apart from ""), the
// SHA-256 computed here, and the load id it landed under.
func verifyExtract(t *testing.T, body, manifest []byte, exp [][]*string, loadID string) {
	t.Helper()
	hdr, got := decodeExtract(t, body)
	if !slices.Equal(hdr, []string{"id", "n", "at", "b", "s"}) {
		t.Errorf("header %q", hdr)
	}
	if len(got) != len(exp) {
		t.Fatalf("the extract has %d rows, the source %d", len(got), len(exp))
	}
	for r := range exp {
		for c := range exp[r] {
			g, e := got[r][c], exp[r][c]
			if (g == nil) != (e == nil) || (g != nil && *g != *e) {
				t.Errorf("row %d column %s: extract %s, source %s", r, hdr[c], show(g), show(e))
			}
		}
	}
	var m rawland.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if len(m.Files) != 1 || m.Files[0].SHA256 != hex.EncodeToString(sum[:]) || m.Files[0].Bytes != int64(len(body)) {
		t.Errorf("manifest files %+v, landed sha256 %x (%d bytes)", m.Files, sum, len(body))
	}
	if m.Extract == nil || m.Extract.Kind != "database" || m.Extract.Rows != int64(len(exp)) || !strings.Contains(m.Extract.Query, `"items"`) {
		t.Fatalf("manifest extract %+v", m.Extract)
	}
	if m.LoadID != loadID {
		t.Errorf("manifest load id %s, committed load id %s", m.LoadID, loadID)
	}
}

// TestPostgresExtractLandsRaw: with storage.raw on, a database table's
// rows land under raw/ as read (NULL ≠ "", numeric scale, timestamptz,
// bytea bytes, quotes and line breaks), with a verified checksum and a
// manifest that says it is a database extract; a rerun with nothing new
// lands nothing; new rows land a new extract under the new load id.
func TestPostgresExtractLandsRaw(t *testing.T) {
	schema, db, want := itemsTable(t)
	ws, p := workspace(t, nil, itemsPlan(schema, "{raw: true}"))
	wh := ws.Warehouse(p)
	check := func(path, loadID string, exp [][]*string) {
		t.Helper()
		if filepath.Base(filepath.Dir(path)) != loadID {
			t.Errorf("landed under %s, committed load id %s", path, loadID)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(filepath.Join(filepath.Dir(path), rawland.ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		verifyExtract(t, body, mb, exp, loadID)
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("extract mode %v %v", fi.Mode(), err)
		}
	}

	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	ex := extracts(t, wh, "items")
	if len(ex) != 1 {
		t.Fatalf("%d extracts landed, want 1: %v", len(ex), ex)
	}
	check(ex[0], res.LoadID, want())
	if res.RowsRead != int64(len(want())) {
		t.Errorf("read %d rows", res.RowsRead)
	}

	// Nothing new: nothing is landed.
	out = runOnce(t, ws, p, flow.RunOptions{})
	if err := out.Result.Tables[0].Err; err != nil {
		t.Fatal(err)
	}
	if again := extracts(t, wh, "items"); len(again) != 1 {
		t.Fatalf("a run with nothing new landed %v", again)
	}
	// Two new rows: a second extract under the new load id. An
	// incremental table is read from its previous watermark (id >= 4, in
	// the SQL), and the extract holds every row the read returned: id 4,
	// re-read unchanged, and the new 5 and 6.
	dbExec(t, db, `INSERT INTO `+schema+`.items VALUES (5, 0.0000, '2026-05-05 05:05:05+00', '\x'::bytea, 'x'), (6, NULL, NULL, NULL, '')`)
	out = runOnce(t, ws, p, flow.RunOptions{})
	res = out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.RowsRead != 3 || res.RowsLoaded != 2 || res.SkippedBy[run.SkipUnchanged] != 1 {
		t.Errorf("read %d loaded %d skipped %v, want 3/2 and 1 unchanged_in_lookback", res.RowsRead, res.RowsLoaded, res.SkippedBy)
	}
	ex = extracts(t, wh, "items")
	if len(ex) != 2 {
		t.Fatalf("%d extracts after new rows, want 2", len(ex))
	}
	for _, e := range ex {
		if filepath.Base(filepath.Dir(e)) == res.LoadID {
			check(e, res.LoadID, want()[3:]) // ordered by id: 4, 5, 6
			return
		}
	}
	t.Fatalf("no extract under the new load id %s: %v", res.LoadID, ex)
}

// TestPostgresExtractLandingFailsTable: when the extract cannot land, the
// table fails and nothing of it is committed.
func TestPostgresExtractLandingFailsTable(t *testing.T) {
	schema, _, _ := itemsTable(t)
	ws, p := workspace(t, nil, itemsPlan(schema, "{raw: true}"))
	wh := ws.Warehouse(p)
	if err := os.MkdirAll(wh, 0o700); err != nil {
		t.Fatal(err)
	}
	// raw is a file: no landing folder can be made below it.
	if err := os.WriteFile(filepath.Join(wh, "raw"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := flow.Run(context.Background(), flow.RunOptions{Workspace: ws, Plan: p, Force: true})
	if out == nil || out.Result == nil || len(out.Result.Tables) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	res := out.Result.Tables[0]
	if res.Err == nil || !strings.Contains(res.Err.Error(), "raw/") {
		t.Fatalf("the table did not fail on the landing: %v", res.Err)
	}
	if res.Commit.SnapshotID != 0 {
		t.Errorf("snapshot %d committed although the extract did not land", res.Commit.SnapshotID)
	}
	// With the obstacle gone, the next run loads and lands.
	if err := os.Remove(filepath.Join(wh, "raw")); err != nil {
		t.Fatal(err)
	}
	out = runOnce(t, ws, p, flow.RunOptions{})
	if res := out.Result.Tables[0]; res.Err != nil || res.RowsLoaded != 4 {
		t.Fatalf("rerun: %v, loaded %d", res.Err, res.RowsLoaded)
	}
	if ex := extracts(t, wh, "items"); len(ex) != 1 {
		t.Fatalf("rerun landed %v", ex)
	}
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	return "\"" + *s + "\""
}

// TestPostgresExtractLandsRawS3: on an S3 warehouse raw/ is on by default;
// the extract lands as an object whose bytes decode to the source rows and
// hash to the manifest's SHA-256; a rerun with nothing new adds no object.
func TestPostgresExtractLandsRawS3(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	schema, _, want := itemsTable(t)
	ws, p := workspace(t, nil, itemsPlan(schema, "{warehouse: 's3://"+bucket+"/lake'}"))
	if !p.RawEnabled() {
		t.Fatal("raw/ is not on by default for an S3 warehouse")
	}
	out := runOnce(t, ws, p, flow.RunOptions{})
	res := out.Result.Tables[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	prefix := "lake/raw/erp/items/"
	objs, err := cl.List(ctx, bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) []byte {
		t.Helper()
		r, err := cl.Get(ctx, bucket, key)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	// The load date is the run's start: the day before this check at most.
	dir := prefix + "load_date=" + time.Now().UTC().Format("2006-01-02") + "/" + res.LoadID + "/"
	if !slices.Contains(keys, dir+rawland.ExtractName) {
		dir = prefix + "load_date=" + time.Now().UTC().Add(-time.Hour).Format("2006-01-02") + "/" + res.LoadID + "/"
	}
	if len(keys) != 2 || !slices.Contains(keys, dir+rawland.ExtractName) || !slices.Contains(keys, dir+rawland.ManifestName) {
		t.Fatalf("raw/ objects %v, want the extract and manifest under %s", keys, dir)
	}
	verifyExtract(t, get(dir+rawland.ExtractName), get(dir+rawland.ManifestName), want(), res.LoadID)

	out = runOnce(t, ws, p, flow.RunOptions{})
	if err := out.Result.Tables[0].Err; err != nil {
		t.Fatal(err)
	}
	again, err := cl.List(ctx, bucket, prefix)
	if err != nil || len(again) != len(objs) {
		t.Fatalf("a run with nothing new: %d raw/ objects, before %d (%v)", len(again), len(objs), err)
	}
}
