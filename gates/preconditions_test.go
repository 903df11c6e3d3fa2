package gates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/plan"
)

var (
	preNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	preRef = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
)

// preWorkspace is a workspace with a source folder "in" holding a.csv
// (1,500 bytes) and b.csv (100 bytes), a plan with table t reading *.csv,
// and a probe whose hooks answer well: 1 GiB free everywhere (one file
// system), 2 GiB of memory, a catalog and a state store that do not exist
// yet.
func preWorkspace(t *testing.T) (*plan.Plan, Probe) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in, "a.csv"), []byte(strings.Repeat("x", 1500)), 0o644)
	os.WriteFile(filepath.Join(in, "b.csv"), []byte(strings.Repeat("y", 100)), 0o644)
	meminfo := filepath.Join(dir, "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal:       4096000 kB\nMemFree:         100000 kB\nMemAvailable:   2097152 kB\n"), 0o644)
	p := &plan.Plan{SchemaVersion: 1, Platform: plan.Platform{Prefix: "acme"},
		Sources: map[string]*plan.Source{"in": {Kind: "files", Path: "in"}},
		Tables:  map[string]*plan.Table{"t": {Source: &plan.TableSource{Name: "in", Files: []string{"*.csv"}}}}}
	state := filepath.Join(dir, ".lima")
	pr := Probe{
		Workspace: dir, Warehouse: filepath.Join(dir, "lake"), StateDir: state,
		Catalog: func(context.Context) (StoreState, error) {
			return StoreState{Missing: true, Path: filepath.Join(state, "catalog.db")}, nil
		},
		State: func(context.Context) (StoreState, error) {
			return StoreState{Missing: true, Path: filepath.Join(state, "state.db")}, nil
		},
		Owner: func(context.Context) (OwnerState, error) {
			return OwnerState{Location: filepath.Join(dir, "lake", "acme.db", OwnerMarkerName), Workspace: dir}, nil
		},
		Timeout:   5 * time.Second,
		Now:       func() time.Time { return preNow },
		Reference: preRef,
		FreeBytes: func(string) (uint64, uint64, error) { return 1 << 30, 7, nil },
		MemInfo:   meminfo,
	}
	return p, pr
}

func byName(fs []Finding) map[string]Finding {
	m := map[string]Finding{}
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

func TestPreconditionsPass(t *testing.T) {
	p, pr := preWorkspace(t)
	fs := Preconditions(context.Background(), p, pr)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name+" "+f.Status)
		if f.Status != Pass {
			t.Errorf("%s: %s — %s", f.Name, f.Status, f.Detail)
		}
	}
	want := "source in pass|table t pass|target writable pass|catalog pass|namespace acme pass|state store pass|lake ownership pass|disk space pass|memory pass|clock pass"
	if got := strings.Join(names, "|"); got != want {
		t.Fatalf("findings\n got  %s\n want %s", got, want)
	}
	m := byName(fs)
	dir := pr.Workspace
	probe := `\.lima-probe-[0-9a-f]{12}`
	for name, re := range map[string]string{
		"source in": "^listed folder " + regexp.QuoteMeta(filepath.Join(dir, "in")) + `: 2 file\(s\), 0 folder\(s\)$`,
		// a.csv + b.csv = 1,600 bytes = 1.6 KiB (1600/1024 = 1.5625).
		"table t":         `^"\*\.csv" matched 2 file\(s\), 1\.6 KiB; read the first KiB of each of the 2 file\(s\)$`,
		"target writable": "^warehouse " + regexp.QuoteMeta(filepath.Join(dir, "lake")) + " does not exist yet: wrote, synced and removed " + regexp.QuoteMeta(dir) + "/" + probe + ` \(17 bytes\) in ` + regexp.QuoteMeta(dir) + ", where the run creates it$",
		"catalog":         "^the SQLite catalog " + regexp.QuoteMeta(filepath.Join(dir, ".lima", "catalog.db")) + " does not exist yet; the first run creates it \\(wrote, synced and removed " + regexp.QuoteMeta(dir) + "/" + probe + `\)$`,
		"namespace acme":  "^namespace acme will be created with the catalog$",
		// 3 × 1,600 = 4,800 bytes = 4.7 KiB (4800/1024 = 4.6875).
		"disk space": "^warehouse " + regexp.QuoteMeta(dir) + ": 1.0 GiB free; workspace " + regexp.QuoteMeta(dir) + ": same file system as the warehouse; needed 3 × 1.6 KiB input \\(2 file\\(s\\)\\) = 4.7 KiB$",
		// 2,097,152 kB = 2 GiB; 256 MiB to stream + one 64 MiB key set (gate
		// 4's whole-row duplicate check of the keyless table t) = 320 MiB;
		// 64 MiB × 3/8 / 16 B = 1,572,864 slots, three quarters full.
		"memory": `^MemAvailable 2\.0 GiB in .*meminfo; a run needs 320\.0 MiB \(256\.0 MiB to stream, plus etl\.key_memory_mb 64\.0 MiB for each of the 1 key set\(s\) table t keeps at once \(gate 4's duplicate check\); a key set holds 1179648 keys in memory and spills the rest to .*/\.lima/tmp, so the need does not grow with the input\)$`,
		"clock":  `^system time 2026-12-01T09:00:00Z; this build's reference date 2026-11-01$`,
	} {
		if !regexp.MustCompile(re).MatchString(m[name].Detail) {
			t.Errorf("%s evidence\n got  %s\n want /%s/", name, m[name].Detail, re)
		}
	}
	// The probes left nothing behind and created nothing.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "in" && e.Name() != "meminfo" {
			t.Errorf("gate 2 left %s behind", e.Name())
		}
	}
}

func TestPreconditionsFailWithEvidenceAndFix(t *testing.T) {
	uid := os.Getuid()
	tests := []struct {
		name   string
		mut    func(t *testing.T, p *plan.Plan, pr *Probe)
		check  string // finding name
		status string
		detail string // regexp; <dir> is the workspace
		fix    string // regexp
	}{
		{"source folder missing", func(t *testing.T, p *plan.Plan, pr *Probe) { p.Sources["in"].Path = "nope" },
			"source in", Fail, `^folder <dir>/nope does not exist$`, `^create it and put the files there, or correct sources\.in\.path in platform\.yaml$`},
		{"source missing: its tables are not checked twice", func(t *testing.T, p *plan.Plan, pr *Probe) { p.Sources["in"].Path = "nope" },
			"table t", Skip, `^not checked: source in \(<dir>/nope\) is not a readable folder; see its finding$`, `^$`},
		// Tests run as root, for whom chmod 000 does not stop a read: a
		// source that is a file is a source that cannot be listed, for
		// everyone.
		{"source is a file", func(t *testing.T, p *plan.Plan, pr *Probe) { p.Sources["in"].Path = "in/a.csv" },
			"source in", Fail, `^<dir>/in/a\.csv is a file, not a folder$`, `^point sources\.in\.path at the folder holding the files$`},
		{"glob matches nothing", func(t *testing.T, p *plan.Plan, pr *Probe) {
			p.Tables["t"].Source.Files = []string{"*.csv", "orders_*.csv"}
		}, "table t", Fail, `^"orders_\*\.csv" matched no file in <dir>/in$`, `^correct tables\.t\.source\.files\[1\] in platform\.yaml, or put the files in <dir>/in$`},
		// A file the kernel refuses to read even to root: /proc/self/mem
		// opens, but reading its first KiB (address 0, never mapped)
		// fails with EIO. It is a regular file, so the glob lists it.
		{"file unreadable even for root", func(t *testing.T, p *plan.Plan, pr *Probe) {
			if _, err := os.Stat("/proc/self/mem"); err != nil {
				t.Skip("no /proc/self/mem on this system")
			}
			p.Sources["in"].Path = "/proc/self"
			p.Tables["t"].Source.Files = []string{"mem"}
		}, "table t", Fail, `^"mem" matched 1 file\(s\), 0 B; read 0 of 1 file\(s\), then: mem: read /proc/self/mem: input/output error$`,
			`^let the user running Lima \(uid ` + strconv.Itoa(uid) + `\) read every file the globs match, or remove the unreadable file from the folder$`},
		// An unwritable target that is honest for root: the warehouse lies
		// under a regular file, so no folder can be created there.
		{"warehouse under a regular file", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Warehouse = filepath.Join(pr.Workspace, "in", "a.csv", "lake")
		},
			"target writable", Fail, `^warehouse <dir>/in/a\.csv/lake: cannot create a file: <dir>/in/a\.csv is a file, not a folder$`,
			`^<dir>/in/a\.csv is a file: move it away, or point storage\.warehouse in platform\.yaml at a folder$`},
		// A system folder is refused before any write is tried.
		{"warehouse in a system folder", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Warehouse = "/sys/kernel"
		}, "target writable", Fail, `^the warehouse /sys/kernel is inside the system folder /sys: Lima writes and tears down what is under its warehouse$`,
			`^set storage\.warehouse to a folder of its own`},
		{"catalog does not open", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Catalog = func(context.Context) (StoreState, error) {
				return StoreState{Path: "/w/.lima/catalog.db"}, errors.New("file is not a database (26)")
			}
		}, "catalog", Fail, `^open the SQLite catalog /w/\.lima/catalog\.db: file is not a database \(26\)$`, `restore \.lima/catalog\.db from a backup`},
		{"postgres state store refused", func(t *testing.T, p *plan.Plan, pr *Probe) {
			p.Storage = plan.Storage{State: "postgres", StateDSNEnv: "LIMA_STATE_DSN"}
			pr.State = func(context.Context) (StoreState, error) {
				return StoreState{}, errors.New("TCP connect to 127.0.0.1:1: connect: connection refused")
			}
		}, "state store", Fail, `^PostgreSQL state store from \$LIMA_STATE_DSN: TCP connect to 127\.0\.0\.1:1: connect: connection refused$`,
			`^export LIMA_STATE_DSN with a DSN of a running PostgreSQL`},
		{"disk too small", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.FreeBytes = func(path string) (uint64, uint64, error) { return 4000, 7, nil }
		}, "disk space", Fail, `^warehouse <dir>: 3\.9 KiB free; workspace <dir>: same file system as the warehouse; needed 3 × 1\.6 KiB input \(2 file\(s\)\) = 4\.7 KiB$`,
			`^free at least 800 B on the file system of <dir>, or point it at a larger disk$`},
		{"disk on two file systems, one small", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.FreeBytes = func(path string) (uint64, uint64, error) {
				if path == "/" {
					return 1 << 30, 2, nil
				}
				return 100, 1, nil
			}
			pr.Warehouse = "/"
		}, "disk space", Fail, `^warehouse /: 1\.0 GiB free; workspace <dir>: 100 B free; needed`, `^free at least 4\.6 KiB on the file system of <dir>`},
		{"memory low", func(t *testing.T, p *plan.Plan, pr *Probe) {
			os.WriteFile(pr.MemInfo, []byte("MemAvailable:     65536 kB\n"), 0o644)
		}, "memory", Fail, `^MemAvailable 64\.0 MiB in .*; a run needs 320\.0 MiB`, `^free at least 256\.0 MiB of memory`},
		{"memory unknown", func(t *testing.T, p *plan.Plan, pr *Probe) { pr.MemInfo = filepath.Join(pr.Workspace, "no-meminfo") },
			"memory", Skip, `^available memory not measured: open <dir>/no-meminfo: no such file or directory$`, `^$`},
		{"clock before the build", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Now = func() time.Time { return time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) }
		}, "clock", Fail, `^system time 2001-01-01T00:00:00Z; this build's reference date 2026-11-01: the clock is before the build was made, so it is wrong$`, `^set the system clock`},
		{"clock far ahead", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Now = func() time.Time { return time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC) }
		}, "clock", Warn, `more than 30 years later`, `^set the system clock`},
		{"a check that hangs fails at the timeout", func(t *testing.T, p *plan.Plan, pr *Probe) {
			pr.Timeout = 50 * time.Millisecond
			block := make(chan struct{})
			t.Cleanup(func() { close(block) })
			pr.State = func(context.Context) (StoreState, error) { <-block; return StoreState{}, nil }
		}, "state store", Fail, `^no answer within 50ms$`, `hung network mount`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, pr := preWorkspace(t)
			tt.mut(t, p, &pr)
			m := byName(Preconditions(context.Background(), p, pr))
			f, ok := m[tt.check]
			if !ok {
				t.Fatalf("no finding %q", tt.check)
			}
			dir := regexp.QuoteMeta(pr.Workspace)
			if f.Status != tt.status {
				t.Errorf("status %s, want %s: %s", f.Status, tt.status, f.Detail)
			}
			if re := strings.ReplaceAll(tt.detail, "<dir>", dir); !regexp.MustCompile(re).MatchString(f.Detail) {
				t.Errorf("evidence\n got  %s\n want /%s/", f.Detail, re)
			}
			if re := strings.ReplaceAll(tt.fix, "<dir>", dir); !regexp.MustCompile(re).MatchString(f.Fix) {
				t.Errorf("fix\n got  %s\n want /%s/", f.Fix, re)
			}
		})
	}
}

func TestPreconditionsAWSTargetsAreSkippedNotFaked(t *testing.T) {
	p, pr := preWorkspace(t)
	// Glue and S3 Tables are reached for real (aws_catalog_test.go); a
	// generic REST catalog is still skipped.
	p.Platform.Catalog = "rest"
	p.Platform.Region = "eu-central-1"
	called := false
	pr.Catalog = func(context.Context) (StoreState, error) { called = true; return StoreState{}, nil }
	m := byName(Preconditions(context.Background(), p, pr))
	if called {
		t.Error("the SQLite catalog probe was called for a REST catalog")
	}
	if f := m["catalog"]; f.Status != Skip || f.Detail != "catalog rest: reaching it (and the namespace) is an AWS check, not in this build" {
		t.Errorf("catalog %+v", f)
	}
	if f := m["AWS identity and region"]; f.Status != Skip || !strings.Contains(f.Detail, "not checked in this build") {
		t.Errorf("AWS %+v", f)
	}
	if f := m["clock"]; f.Status != Pass || !strings.HasSuffix(f.Detail, "; AWS rejects requests signed more than 15 minutes off its time: skew against AWS is not measured in this build") {
		t.Errorf("clock %+v", f)
	}
	if len(FailedFindings(Preconditions(context.Background(), p, pr))) != 0 {
		t.Error("skips must not fail the gate")
	}
}

// The checks run concurrently: the catalog probe waits for the state probe
// to have started. Run one after the other, it would wait until the
// timeout and fail.
func TestPreconditionsRunConcurrently(t *testing.T) {
	p, pr := preWorkspace(t)
	started := make(chan struct{})
	pr.Timeout = 10 * time.Second
	pr.State = func(context.Context) (StoreState, error) {
		close(started)
		return StoreState{Evidence: "opened"}, nil
	}
	pr.Catalog = func(ctx context.Context) (StoreState, error) {
		select {
		case <-started:
			return StoreState{Evidence: "opened", NamespaceExists: true, Tables: 2}, nil
		case <-ctx.Done():
			return StoreState{}, ctx.Err()
		}
	}
	m := byName(Preconditions(context.Background(), p, pr))
	if m["catalog"].Status != Pass || m["namespace acme"].Detail != "namespace acme exists with 2 table(s)" {
		t.Fatalf("catalog %+v namespace %+v", m["catalog"], m["namespace acme"])
	}
}

func TestProbeWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	probe, missing, err := ProbeWrite(dir)
	if err != nil || missing || filepath.Dir(probe) != dir {
		t.Fatalf("ProbeWrite = %q %v %v", probe, missing, err)
	}
	if _, err := os.Stat(probe); !os.IsNotExist(err) {
		t.Fatalf("probe %s still there: %v", probe, err)
	}
	probe, missing, err = ProbeWrite(filepath.Join(dir, "a", "b"))
	if err != nil || !missing || filepath.Dir(probe) != dir {
		t.Fatalf("missing folder: %q %v %v", probe, missing, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

// Where the kernel refuses the write itself (sysfs lets nobody, root
// included, create files), the evidence is the error and the fix names
// the user.
func TestProbeWriteRefusedByTheKernel(t *testing.T) {
	_, _, err := ProbeWrite("/sys/kernel")
	if err == nil {
		t.Skip("/sys/kernel is writable here")
	}
	if !regexp.MustCompile(`^open /sys/kernel/\.lima-probe-[0-9a-f]{12}: permission denied$`).MatchString(gate2Err(err)) {
		t.Errorf("evidence %q", gate2Err(err))
	}
	want := `^let the user running Lima \(uid ` + strconv.Itoa(os.Getuid()) + `\) create files in /sys/kernel \(permissions, a read-only mount, quota\), or point storage\.warehouse at a writable folder$`
	if fix := writeFix("/sys/kernel", err, "storage.warehouse"); !regexp.MustCompile(want).MatchString(fix) {
		t.Errorf("fix %q", fix)
	}
}

// Gate 2's memory figure follows the plan: 256 MiB to stream plus
// etl.key_memory_mb for each key set the table that keeps the most holds
// at once, and it says which tables' keys will spill, from the size of
// their files and of a row.
func TestMemoryFigureFromThePlan(t *testing.T) {
	p, pr := preWorkspace(t)
	pr.MemFloor = DefaultMemFloor
	in := filepath.Join(pr.Workspace, "in")
	// 30,000 rows of 11 bytes ("00000001,x\n"); a 1 MiB key set holds
	// 1 MiB × 3/8 / 16 B = 24,576 slots × 3/4 = 18,432 keys: it spills.
	var big strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&big, "%08d,x\n", i)
	}
	os.WriteFile(filepath.Join(in, "big.txt"), []byte(big.String()), 0o644)
	os.WriteFile(filepath.Join(in, "small.txt"), []byte(strings.Repeat("00000001,x\n", 100)), 0o644)
	p.ETL.KeyMemoryMB = 1
	p.Tables = map[string]*plan.Table{
		"big":   {Source: &plan.TableSource{Name: "in", Files: []string{"big.txt"}}, Load: plan.LoadSpec{Mode: plan.ModeIncremental, Keys: []string{"id"}}},
		"small": {Source: &plan.TableSource{Name: "in", Files: []string{"small.txt"}}, Load: plan.LoadSpec{Keys: []string{"id"}}},
	}
	need, why := pr.memoryNeed(context.Background(), p)
	// big keeps the load's keys and the lake's: 256 + 2 × 1 MiB.
	if need != 258<<20 {
		t.Errorf("need %d, want %d (258 MiB)", need, 258<<20)
	}
	for _, want := range []string{
		"each of the 2 key set(s) table big keeps at once (the load's keys, the lake's keys)",
		"a key set holds 18432 keys in memory",
		"table big: about 30000 rows (322.3 KiB at ~11 B a row), more than the 18432 keys a key set holds in memory: its keys will spill",
		"table small: about 100 rows: its keys fit in memory",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("figure %q\nlacks %q", why, want)
		}
	}
	// An upsert with delete detection keeps three: its own keys, the
	// lake's keys and versions, the source's keys.
	p.Tables["up"] = &plan.Table{Source: &plan.TableSource{Name: "db"}, Load: plan.LoadSpec{Mode: plan.ModeUpsert, Keys: []string{"id"}, DetectDeletes: "every_run"}}
	if need, why := pr.memoryNeed(context.Background(), p); need != 259<<20 || !strings.Contains(why, "3 key set(s) table up") {
		t.Errorf("with the upsert: need %d, want %d; %s", need, 259<<20, why)
	}
}
