package flow_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lima-lake/lima/engine/ledger"
	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/flow"
	"github.com/lima-lake/lima/internal/cdcref"
	"github.com/lima-lake/lima/internal/liferef"
)

// The kill matrix (issue 17): every verb that writes, killed at every
// named fault point it passes and by SIGKILL after a ladder of delays, then
// run again; after the rerun and after a maintain:
//   - the lake equals a reference computed by the test from its own model
//     of the input (internal/liferef, internal/cdcref, or a plain map here),
//     never read back from Lima's code;
//   - the exception queue equals the reference (by identity — file and raw
//     row — where the model has them, by rule counts for change capture);
//   - no file in a table's folder is left that the current metadata does
//     not reference (the orphan window is 1h, so a file counts as cleaned
//     only when Lima removed it as its own, not because it aged);
//   - the state store has no run left "running".
//
// LIMA_SOAK=1 runs every case (≥ 100 kill points); the default run plays a
// fixed sample of 11. LIMA_KILL_CASES=a,b (case names, or verbs) picks
// cases.
func TestKillMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs lima-tui")
	}
	bin := os.Getenv("LIMA_LIFE_BIN")
	if bin == "" {
		bin = buildLima(t)
	}
	all := kmCases()
	cases := kmSample(all)
	if os.Getenv("LIMA_SOAK") == "1" {
		cases = all
	}
	if v := os.Getenv("LIMA_KILL_CASES"); v != "" {
		cases = nil
		for _, c := range all {
			for _, w := range strings.Split(v, ",") {
				if w == c.name() || w == c.verb {
					cases = append(cases, c)
				}
			}
		}
	}
	start := time.Now()
	killed, ran := 0, 0
	killedBy := map[string]int{}
	for i, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			km := &kmRun{t: t, bin: bin, c: c, rng: rand.New(rand.NewPCG(17, uint64(slices.Index(all, c))))}
			err := km.play()
			ran++
			if km.killed {
				killed++
				killedBy[c.verb]++
			}
			if os.Getenv("LIMA_KILL_STEPS") == "1" {
				t.Logf("steps:\n  %s", strings.Join(km.steps, "\n  "))
			}
			if err != nil {
				t.Errorf("case %d (reproduce: LIMA_KILL_CASES=%s go test -run TestKillMatrix ./flow/): %v\nsteps:\n  %s",
					i, c.name(), err, strings.Join(km.steps, "\n  "))
			}
		})
	}
	t.Logf("kill matrix: %d of %d cases run (%d killed by their kill point, the rest ran to the end before it; killed by verb %v), in %v",
		ran, len(all), killed, killedBy, time.Since(start).Round(time.Second))
}

// kmCase is one kill point of one verb: a named fault point
// (LIMA_FAULTPOINT) or, with point empty, SIGKILL after delay.
type kmCase struct {
	verb  string
	point string
	delay time.Duration
}

func (c kmCase) name() string {
	if c.point != "" {
		return c.verb + "@" + c.point
	}
	return fmt.Sprintf("%s@sigkill+%dms", c.verb, c.delay.Milliseconds())
}

// kmVerbs are the verbs that write, each with the fault points it passes
// and the step of its delay ladder: about its run time on the case's small
// table (0.3–1 s on a shared 2-core machine) divided by twice the
// ladder's length: the ladder spans the first half of the verb's life on a
// loaded machine (the named fault points cover the commits), and most of
// it on an idle one; a rung longer than the verb lets it finish, and the
// case still checks that the rerun changes nothing. The summary counts
// the cases each verb actually lost to its kill.
var kmVerbs = []struct {
	verb   string
	points []string
	step   time.Duration
}{
	{"run", []string{"before-commit", "after-commit", icesink.FaultDataFileBytes + "4", icesink.FaultDataFileBytes + "1000"}, 35 * time.Millisecond},
	{"full-refresh", []string{"before-commit", "after-commit"}, 35 * time.Millisecond},
	{"hive-run", []string{hivesink.FaultBeforePublish, hivesink.FaultMidPublish, hivesink.FaultAfterManifest, "before-commit", "after-commit"}, 35 * time.Millisecond},
	{"hive-full-refresh", []string{hivesink.FaultBeforePublish, hivesink.FaultMidPublish, hivesink.FaultAfterManifest}, 35 * time.Millisecond},
	{"upsert", []string{"before-commit", "after-commit"}, 40 * time.Millisecond},
	{"cdc", []string{"before-commit", "after-commit"}, 70 * time.Millisecond},
	{"watch", []string{"before-commit", "after-commit"}, 80 * time.Millisecond},
	{"replay", []string{"replay-before-commit", "replay-after-commit"}, 45 * time.Millisecond},
	{"compact", []string{icesink.FaultDataFileBytes + "300", flow.FaultCompactAfterDataFiles, flow.FaultCompactInsideCommit, flow.FaultCompactAfterCommit}, 35 * time.Millisecond},
	{"maintain", []string{flow.FaultMaintainInsideExpireCommit, flow.FaultMaintainAfterExpireCommit, flow.FaultMaintainMidExpiredFiles, flow.FaultMaintainAfterExpire, flow.FaultMaintainMidOrphans}, 45 * time.Millisecond},
	{"teardown", nil, 40 * time.Millisecond},
}

// kmLadder is the number of delays per verb.
const kmLadder = 8

func kmCases() []kmCase {
	var out []kmCase
	for _, v := range kmVerbs {
		for _, p := range v.points {
			out = append(out, kmCase{verb: v.verb, point: p})
		}
		for i := 1; i <= kmLadder; i++ {
			out = append(out, kmCase{verb: v.verb, delay: time.Duration(i) * v.step})
		}
	}
	return out
}

// kmSample is the default run's fixed sample: the riskiest named points
// and a delay each for the verbs without one.
func kmSample(all []kmCase) []kmCase {
	names := []string{
		"run@after-commit",
		"full-refresh@before-commit",
		"hive-run@" + hivesink.FaultAfterManifest,
		"upsert@after-commit",
		"cdc@before-commit",
		"watch@after-commit",
		"replay@replay-after-commit",
		"compact@" + flow.FaultCompactAfterDataFiles,
		"maintain@" + flow.FaultMaintainInsideExpireCommit,
		"maintain@" + flow.FaultMaintainMidExpiredFiles,
		"teardown@sigkill+160ms",
	}
	var out []kmCase
	for _, c := range all {
		if slices.Contains(names, c.name()) {
			out = append(out, c)
		}
	}
	return out
}

// kmRun is one case being played.
type kmRun struct {
	t      *testing.T
	bin    string
	c      kmCase
	rng    *rand.Rand
	dir    string
	steps  []string
	killed bool
}

func (km *kmRun) step(format string, a ...any) {
	km.steps = append(km.steps, fmt.Sprintf(format, a...))
}

// kill runs the verb with the case's kill point; killed or not, both are
// fine (a delay may be longer than the verb), any other failure is not.
func (km *kmRun) kill(args ...string) error {
	cmd := exec.Command(km.bin, args...)
	cmd.Dir = km.dir
	cmd.Env = os.Environ()
	if km.c.point != "" {
		cmd.Env = append(cmd.Env, "LIMA_FAULTPOINT="+km.c.point)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	if km.c.point == "" {
		timer := time.AfterFunc(km.c.delay, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	t0 := time.Now()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		km.killed = true
		km.step("%s: killed (%s) after %v", strings.Join(args[:1], " "), km.c.name(), time.Since(t0).Round(time.Millisecond))
		return nil
	}
	km.step("%s: not killed, ran to the end in %v (%v)", strings.Join(args[:1], " "), time.Since(t0).Round(time.Millisecond), err)
	if err != nil {
		return fmt.Errorf("lima-tui %s: %v\n%s", strings.Join(args, " "), err, tail(out.String(), 2000))
	}
	return nil
}

// cli runs lima-tui to the end.
func (km *kmRun) cli(args ...string) error {
	cmd := exec.Command(km.bin, args...)
	cmd.Dir = km.dir
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	km.step("%s (%v)", strings.Join(args, " "), time.Since(t0).Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("lima-tui %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 2000))
	}
	return nil
}

func (km *kmRun) planPath() string { return filepath.Join(km.dir, "platform.yaml") }

// kmMaintenance: every snapshot but the newest (and what exactly-once
// protects) expires; orphans must be an hour old before age alone lets
// maintain remove them, so the orphan check below sees every file Lima
// failed to clean up as its own.
const kmMaintenance = "maintenance: {retain_last: 1, max_snapshot_age: 0s, orphan_older_than: 1h}\n"

func (km *kmRun) play() error {
	switch km.c.verb {
	case "run", "full-refresh", "hive-run", "hive-full-refresh", "replay", "compact", "maintain", "teardown":
		return km.files()
	case "upsert":
		return km.upsert()
	case "cdc":
		return km.cdc()
	case "watch":
		return km.watch()
	}
	return fmt.Errorf("unknown verb %q", km.c.verb)
}

// files plays the verbs on a table of CSV files with the lifecycle test's
// reference model.
func (km *kmRun) files() error {
	c := km.c
	hive := strings.HasPrefix(c.verb, "hive-")
	lr := &lifeRun{t: km.t, bin: km.bin, rng: km.rng, dir: km.t.TempDir(), written: map[string]string{}}
	km.dir = lr.dir
	keyed := km.rng.IntN(3) > 0
	lr.m = liferef.New(km.rng, "orders", keyed)
	if hive {
		lr.m.Plan.Partition = nil // the Hive reader below reads the files' own columns
	}
	km.step("first load (keyed %v, partition %v, files %v)", keyed, lr.m.Plan.Partition, lr.m.FileList())
	if err := os.MkdirAll(filepath.Join(lr.dir, "in"), 0o700); err != nil {
		return err
	}
	y := lr.m.Plan.YAML("life") + kmMaintenance
	if hive {
		y = strings.Replace(y, "platform: {prefix: life}", "platform: {prefix: life, pattern: hive}", 1)
	}
	if err := os.WriteFile(lr.planPath(), []byte(y), 0o600); err != nil {
		return err
	}
	if err := km.cli("approve", "--gate", "data-model", "--by", "life", "--plan", lr.planPath()); err != nil {
		return err
	}
	check := lr.check
	if hive {
		check = func() error { return km.checkHive(lr) }
	}
	load := func(extra ...string) error {
		if err := lr.writeFiles(); err != nil {
			return err
		}
		lr.m.Load()
		km.step("run %v", extra)
		if err := lr.run(extra...); err != nil {
			return err
		}
		return check()
	}
	if err := load(); err != nil {
		return fmt.Errorf("first load: %w", err)
	}
	// History to compact, expire and tear down.
	// A maintain needs snapshots to expire: the model may hold back every
	// row of a load (no snapshot), so it loads on until there are three.
	if c.verb == "compact" || c.verb == "maintain" || c.verb == "teardown" {
		for i := 0; i < 2 || (c.verb == "maintain" && km.snapshots("orders") < 3 && i < 8); i++ {
			km.step("change: %s", lr.m.Change())
			if err := load(); err != nil {
				return err
			}
		}
	}
	planArg := []string{"--plan", lr.planPath()}
	runArgs := append([]string{"run", "--force", "--json"}, planArg...)
	switch c.verb {
	case "run", "full-refresh", "hive-run", "hive-full-refresh":
		km.step("change: %s", lr.m.Change())
		if err := lr.writeFiles(); err != nil {
			return err
		}
		lr.m.Load()
		var extra []string
		if strings.HasSuffix(c.verb, "full-refresh") {
			extra = []string{"--full-refresh"}
		}
		if err := km.kill(append(runArgs, extra...)...); err != nil {
			return err
		}
		km.step("rerun %v", extra)
		if err := lr.run(extra...); err != nil {
			return err
		}
	case "replay":
		if err := km.resolveSome(lr); err != nil {
			return err
		}
		lr.m.Replay()
		if err := km.kill(append([]string{"exceptions", "replay", "--by", "life"}, planArg...)...); err != nil {
			return err
		}
		if err := km.cli(append([]string{"exceptions", "replay", "--by", "life"}, planArg...)...); err != nil {
			return err
		}
	case "compact":
		// Full loads leave one file per partition, nothing to compact:
		// replays of fixed exceptions append small files beside them, two
		// at least, and more (after another load when none could be
		// fixed) until a partition holds two files, up to 8 rounds.
		for i := 0; i < 2 || (!km.compactable("orders") && i < 8); i++ {
			if i >= 2 {
				km.step("change: %s", lr.m.Change())
				if err := load(); err != nil {
					return err
				}
			}
			if err := km.resolveSome(lr); err != nil {
				return err
			}
			km.step("replayed %d", lr.m.Replay())
			if err := km.cli(append([]string{"exceptions", "replay", "--by", "life"}, planArg...)...); err != nil {
				return err
			}
		}
		km.step("compactable %v", km.compactable("orders"))
		if err := km.kill(append([]string{"compact"}, planArg...)...); err != nil {
			return err
		}
		if err := km.cli(append([]string{"compact"}, planArg...)...); err != nil {
			return err
		}
	case "maintain":
		// Two orphans of a long-dead process (named as Lima names its
		// files, five days old): maintain removes them.
		loc, err := km.tableFolder(lr)
		if err != nil {
			return err
		}
		for range 2 {
			plant(km.t, filepath.Join(loc, "data", "00000-0-"+uuid.NewString()+".parquet"), 5*24*time.Hour)
		}
		if err := km.kill(append([]string{"maintain"}, planArg...)...); err != nil {
			return err
		}
		if err := km.cli(append([]string{"maintain"}, planArg...)...); err != nil {
			return err
		}
	case "teardown":
		args := append([]string{"teardown", "--confirm", "life", "--by", "life"}, planArg...)
		if err := km.kill(args...); err != nil {
			return err
		}
		if err := km.cli(args...); err != nil {
			return err
		}
		return km.checkTornDown()
	}
	if err := check(); err != nil {
		return fmt.Errorf("after the rerun: %w", err)
	}
	if err := km.cli(append([]string{"maintain"}, planArg...)...); err != nil {
		return err
	}
	if err := check(); err != nil {
		return fmt.Errorf("after maintain: %w", err)
	}
	return km.checkAfterMaintain()
}

// resolveSome resolves up to three open exceptions the model can fix
// (as the lifecycle's replay operation does).
func (km *kmRun) resolveSome(lr *lifeRun) error {
	ids, err := lr.openIDs()
	if err != nil {
		return err
	}
	open := lr.m.OpenIdents()
	n := 0
	for _, id := range open {
		if n == 3 {
			break
		}
		fix, ok := lr.m.FixFor(id)
		if !ok || len(ids[id]) == 0 {
			continue
		}
		args := []string{"exceptions", "resolve", strconv.FormatInt(ids[id][0], 10), "--plan", lr.planPath(), "--by", "life"}
		var sets []string
		for c, v := range fix {
			sets = append(sets, c+"="+v)
		}
		sort.Strings(sets)
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		if err := km.cli(args...); err != nil {
			return err
		}
		lr.m.Resolve(id, fix)
		n++
	}
	km.step("resolved %d of %d open exceptions", n, len(open))
	return nil
}

// tableFolder is the local folder of the table orders.
func (km *kmRun) tableFolder(lr *lifeRun) (string, error) {
	tbl, err := km.icebergTable("orders")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(tbl.Location())
	if err != nil {
		return "", err
	}
	return u.Path, nil
}

// compactable reports whether a partition of the table's current
// snapshot holds two data files or more (compact then has work).
func (km *kmRun) compactable(name string) bool {
	tbl, err := km.icebergTable(name)
	if err != nil || tbl.CurrentSnapshot() == nil {
		return false
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		return false
	}
	per := map[string]int{}
	for _, t := range tasks {
		k := fmt.Sprint(t.File.Partition())
		if per[k]++; per[k] >= 2 {
			return true
		}
	}
	return false
}

// snapshots counts the snapshots of the table (0 when it does not exist).
func (km *kmRun) snapshots(name string) int {
	tbl, err := km.icebergTable(name)
	if err != nil {
		return 0
	}
	return len(tbl.Metadata().Snapshots())
}

func (km *kmRun) icebergTable(name string) (*table.Table, error) {
	ctx := context.Background()
	p, err := flow.LoadPlan(km.planPath())
	if err != nil {
		return nil, err
	}
	sk, err := flow.OpenSink(ctx, flow.Workspace{Dir: km.dir}, p, nil)
	if err != nil {
		return nil, err
	}
	defer sk.Close()
	return sk.Catalog().LoadTable(ctx, []string{p.Namespace(), name})
}

// checkAfterMaintain: no table folder holds a file its current metadata
// does not reference, and no run is left running.
func (km *kmRun) checkAfterMaintain() error {
	ctx := context.Background()
	ws := flow.Workspace{Dir: km.dir}
	p, err := flow.LoadPlan(km.planPath())
	if err != nil {
		return err
	}
	var errs []error
	if p.Pattern() != plan.PatternHive {
		sk, err := flow.OpenSink(ctx, ws, p, nil)
		if err != nil {
			return err
		}
		defer sk.Close()
		for id, err := range sk.Catalog().ListTables(ctx, table.Identifier{p.Namespace()}) {
			if err != nil {
				return err
			}
			tbl, err := sk.Catalog().LoadTable(ctx, id)
			if err != nil {
				return err
			}
			if orphans, err := kmUnreferenced(ctx, tbl); err != nil {
				errs = append(errs, err)
			} else if len(orphans) > 0 {
				errs = append(errs, fmt.Errorf("after maintain, %d file(s) in %s's folder the current metadata does not reference:\n  %s",
					len(orphans), strings.Join(id, "."), strings.Join(capList(orphans, 12), "\n  ")))
			}
		}
	}
	st, err := flow.OpenLedger(ctx, ws, p)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.Runs(ctx, 0)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Status == "running" {
			errs = append(errs, fmt.Errorf("the state store still has run %s as running", r.ID))
		}
	}
	return errors.Join(errs...)
}

// kmUnreferenced lists the files below the table's location that its
// current metadata does not reference: the metadata file and those its
// log names, every snapshot's manifest list and manifests, the data and
// delete files their entries list as live, statistics files.
func kmUnreferenced(ctx context.Context, tbl *table.Table) ([]string, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	pathOf := func(s string) string {
		if u, err := url.Parse(s); err == nil && u.Scheme == "file" {
			return u.Path
		}
		return s
	}
	ref := map[string]bool{pathOf(tbl.MetadataLocation()): true}
	meta := tbl.Metadata()
	for e := range meta.PreviousFiles() {
		ref[pathOf(e.MetadataFile)] = true
	}
	for s := range meta.Statistics() {
		ref[pathOf(s.StatisticsPath)] = true
	}
	for _, s := range meta.Snapshots() {
		ref[pathOf(s.ManifestList)] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			ref[pathOf(m.FilePath())] = true
			for e, err := range m.Entries(fs, false) {
				if err != nil {
					return nil, err
				}
				if e.Status() != iceberg.EntryStatusDELETED {
					ref[pathOf(e.DataFile().FilePath())] = true
				}
			}
		}
	}
	var out []string
	err = filepath.WalkDir(pathOf(tbl.Location()), func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !ref[p] {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// checkTornDown: after the teardown's rerun the lake holds no file, the
// catalog no table of the plan, the state store no exception.
func (km *kmRun) checkTornDown() error {
	var errs []error
	lake := filepath.Join(km.dir, "lake")
	var left []string
	_ = filepath.WalkDir(lake, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("after the teardown's rerun %d file(s) are left in the lake: %v", len(left), capList(left, 8)))
	}
	if tbl, err := km.icebergTable("orders"); err == nil {
		errs = append(errs, fmt.Errorf("after the teardown's rerun the catalog still has the table (%s)", tbl.Location()))
	}
	ctx := context.Background()
	p, err := flow.LoadPlan(km.planPath())
	if err != nil {
		return err
	}
	st, err := flow.OpenLedger(ctx, flow.Workspace{Dir: km.dir}, p)
	if err != nil {
		return err
	}
	defer st.Close()
	if n, err := st.Count(ctx, ledger.Filter{}); err != nil || n != 0 {
		errs = append(errs, fmt.Errorf("after the teardown's rerun the state store holds %d exception(s) (%v)", n, err))
	}
	return errors.Join(errs...)
}

// checkHive compares a Hive table (its manifests' live files, read with
// the Parquet reader) with the model, the ledger too; no Parquet file in
// the table's folder is outside the live set.
func (km *kmRun) checkHive(lr *lifeRun) error {
	ctx := context.Background()
	p, err := flow.LoadPlan(km.planPath())
	if err != nil {
		return err
	}
	ws := flow.Workspace{Dir: km.dir}
	sk, err := hivesink.Open(ctx, hivesink.Options{Warehouse: ws.Warehouse(p)})
	if err != nil {
		return err
	}
	tb, err := sk.OpenTable(ctx, tableSpecOf(km.t, p, "orders"))
	if err != nil {
		return err
	}
	files, err := tb.(*hivesink.Table).LiveFiles(ctx)
	if err != nil {
		return err
	}
	var errs []error
	root := filepath.Join(ws.Warehouse(p), p.Namespace(), "orders")
	live := map[string]bool{}
	got := map[string]int{}
	for _, f := range files {
		path := filepath.Join(root, filepath.FromSlash(f.Path))
		live[path] = true
		err := kmParquetRows(path, func(row map[string]string) {
			cols := map[string]string{} // the plan's columns (not the folders' partition values)
			for _, c := range lr.m.Plan.Cols {
				cols[c.Name] = row[c.Name]
			}
			got[liferef.RowText(cols)]++
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	var stray []string
	_ = filepath.WalkDir(root, func(path string, d iofs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") && !live[filepath.Clean(path)] {
			stray = append(stray, path)
		}
		return nil
	})
	if len(stray) > 0 {
		errs = append(errs, fmt.Errorf("%d Parquet file(s) in the table's folder outside its live set (a reader globbing the folder reads them): %v", len(stray), capList(stray, 8)))
	}
	want := map[string]int{}
	for text, n := range lr.m.Lake {
		if lr.m.Plan.Keyed {
			_, text, _ = strings.Cut(text, "\x00")
		}
		want[text] += n
	}
	var diff []string
	for text, n := range got {
		if want[text] != n {
			diff = append(diff, fmt.Sprintf("%dx in the lake, %dx in the reference: %s", n, want[text], text))
		}
	}
	for text, n := range want {
		if _, ok := got[text]; !ok {
			diff = append(diff, fmt.Sprintf("0x in the lake, %dx in the reference: %s", n, text))
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		errs = append(errs, fmt.Errorf("hive lake ≠ reference:\n  %s", strings.Join(capList(diff, 12), "\n  ")))
	}
	if err := lr.checkLedger(); err != nil {
		errs = append(errs, err)
	}
	lr.counts = nil
	return errors.Join(errs...)
}

// kmParquetRows calls fn with every row of a Parquet file (cells as text,
// dates yyyy-mm-dd, nulls as liferef.Null).
func kmParquetRows(path string, fn func(map[string]string)) error {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return err
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		kmRecordRows(tr.RecordBatch(), fn)
	}
	return nil
}

func kmRecordRows(rec arrow.RecordBatch, fn func(map[string]string)) {
	for r := 0; r < int(rec.NumRows()); r++ {
		row := map[string]string{}
		for c, f := range rec.Schema().Fields() {
			col := rec.Column(c)
			v := liferef.Null
			if col.IsValid(r) {
				v = col.ValueStr(r)
				if d, ok := col.(*array.Date32); ok {
					v = d.Value(r).FormattedString()
				}
			}
			row[f.Name] = v
		}
		fn(row)
	}
}

// kmIcebergRows reads a table's current snapshot as "col=value|…" texts.
func kmIcebergRows(ctx context.Context, tbl *table.Table) (map[string]int, error) {
	out := map[string]int{}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	for rec, err := range it {
		if err != nil {
			return nil, err
		}
		kmRecordRows(rec, func(row map[string]string) { out[liferef.RowText(row)]++ })
		rec.Release()
	}
	return out, nil
}

// kmSameRows compares a lake read with kmIcebergRows with the reference.
func kmSameRows(what string, got, want map[string]int) error {
	var diff []string
	for text, n := range got {
		if want[text] != n {
			diff = append(diff, fmt.Sprintf("%dx in the lake, %dx in the reference: %s", n, want[text], text))
		}
	}
	for text, n := range want {
		if _, ok := got[text]; !ok {
			diff = append(diff, fmt.Sprintf("0x in the lake, %dx in the reference: %s", n, text))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	sort.Strings(diff)
	return fmt.Errorf("%s: lake ≠ reference:\n  %s", what, strings.Join(capList(diff, 12), "\n  "))
}

// kmOpenExceptions are the open exceptions of a table by (file, raw row).
func (km *kmRun) kmOpenExceptions(tableName string) (map[string]int, error) {
	ctx := context.Background()
	p, err := flow.LoadPlan(km.planPath())
	if err != nil {
		return nil, err
	}
	st, err := flow.OpenLedger(ctx, flow.Workspace{Dir: km.dir}, p)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := map[string]int{}
	var page ledger.Page
	for {
		ex, next, err := st.List(ctx, ledger.Filter{Table: tableName, Status: ledger.StatusOpen}, page)
		if err != nil {
			return nil, err
		}
		for _, e := range ex {
			out[filepath.Base(e.File)+" "+strings.TrimRight(string(e.Raw), "\r\n")]++
		}
		if next == "" {
			return out, nil
		}
		page.After = next
	}
}

func kmSameSet(what string, got, want map[string]int) error {
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return nil
	}
	return fmt.Errorf("%s: ledger %v, reference %v", what, got, want)
}

// upsert: a SQLite table loaded by key; the reference is the map the
// test writes into it.
func (km *kmRun) upsert() error {
	km.dir = km.t.TempDir()
	dbFile := filepath.Join(km.dir, "erp.db")
	db, err := sql.Open("sqlite", dbFile)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL, label TEXT NOT NULL)`); err != nil {
		return err
	}
	ref := map[int]int{}
	set := func(id, qty int) error {
		ref[id] = qty
		_, err := db.Exec(`INSERT INTO items VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET qty = excluded.qty, label = excluded.label`, id, qty, fmt.Sprintf("item %d", id))
		return err
	}
	for id := 1; id <= 40; id++ {
		if err := set(id, km.rng.IntN(1000)); err != nil {
			return err
		}
	}
	y := `schema_version: 1
platform: {prefix: upk}
sources:
  erp: {kind: sqlite, path: ` + strconv.Quote(dbFile) + `}
tables:
  items:
    source: {name: erp, table: items}
    columns: [{name: id, type: long}, {name: qty, type: long}, {name: label, type: string}]
    load: {mode: upsert, keys: [id]}
` + kmMaintenance
	if err := km.writeApproved(y); err != nil {
		return err
	}
	want := func() map[string]int {
		out := map[string]int{}
		for id, q := range ref {
			out[fmt.Sprintf("id=%d|label=item %d|qty=%d", id, id, q)]++
		}
		return out
	}
	checkAll := func(what string) error {
		tbl, err := km.icebergTable("items")
		if err != nil {
			return err
		}
		got, err := kmIcebergRows(context.Background(), tbl)
		if err != nil {
			return err
		}
		var errs []error
		errs = append(errs, kmSameRows(what, got, want()))
		open, err := km.kmOpenExceptions("items")
		if err != nil {
			return err
		}
		errs = append(errs, kmSameSet(what, open, map[string]int{}))
		return errors.Join(errs...)
	}
	runArgs := []string{"run", "--force", "--json", "--plan", km.planPath()}
	if err := km.cli(runArgs...); err != nil {
		return err
	}
	if err := checkAll("first load"); err != nil {
		return err
	}
	// Change: update ten rows, insert ten.
	for i := 0; i < 10; i++ {
		if err := set(1+km.rng.IntN(40), 1000+km.rng.IntN(1000)); err != nil {
			return err
		}
		if err := set(41+i, km.rng.IntN(1000)); err != nil {
			return err
		}
	}
	km.step("updated and inserted rows")
	if err := km.kill(runArgs...); err != nil {
		return err
	}
	if err := km.cli(runArgs...); err != nil {
		return err
	}
	if err := checkAll("after the rerun"); err != nil {
		return err
	}
	if err := km.cli("maintain", "--plan", km.planPath()); err != nil {
		return err
	}
	if err := checkAll("after maintain"); err != nil {
		return err
	}
	return km.checkAfterMaintain()
}

// writeApproved writes the plan into the case's folder, approved.
func (km *kmRun) writeApproved(y string) error {
	if err := os.MkdirAll(filepath.Join(km.dir, "in"), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(km.planPath(), []byte(y), 0o600); err != nil {
		return err
	}
	return km.cli("approve", "--gate", "data-model", "--by", "km", "--plan", km.planPath())
}

// cdc: change files (internal/cdcref's generator and reference replay),
// one batch loaded, the next killed and rerun.
func (km *kmRun) cdc() error {
	km.dir = km.t.TempDir()
	if err := km.writeApproved(cdcWorkspacePlan + kmMaintenance); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(km.dir, "in", "changes"), 0o700); err != nil {
		return err
	}
	ref := cdcref.NewReplay()
	rules := map[string]int64{}
	files := map[string]string{}
	nextFile, seq := 0, 100
	batch := func() error {
		cdcref.Gen(km.rng, files, &nextFile, &seq)
		for name, c := range files {
			if err := os.WriteFile(filepath.Join(km.dir, "in", "changes", name), []byte(c), 0o600); err != nil {
				return err
			}
		}
		for r, n := range ref.Apply(files).Rules {
			rules[r] += n
		}
		return nil
	}
	ws := flow.Workspace{Dir: km.dir}
	checkAll := func(what string) error {
		p, err := flow.LoadPlan(km.planPath())
		if err != nil {
			return err
		}
		lake, _ := cdcLake(km.t, ws, p)
		var errs []error
		if fmt.Sprint(lake) != fmt.Sprint(ref.Rows) {
			errs = append(errs, fmt.Errorf("%s: lake %v\nreference %v", what, lake, ref.Rows))
		}
		st, err := flow.OpenLedger(context.Background(), ws, p)
		if err != nil {
			return err
		}
		defer st.Close()
		by, err := st.CountBy(context.Background(), ledger.Filter{Table: "customers"}, "rule")
		if err != nil {
			return err
		}
		want := map[string]int64{}
		for r, n := range rules {
			if n > 0 {
				want[r] = n
			}
		}
		if fmt.Sprint(by) != fmt.Sprint(want) {
			errs = append(errs, fmt.Errorf("%s: exceptions by rule %v, reference %v", what, by, want))
		}
		return errors.Join(errs...)
	}
	runArgs := []string{"run", "--force", "--json", "--plan", km.planPath()}
	if err := batch(); err != nil {
		return err
	}
	if err := km.cli(runArgs...); err != nil {
		return err
	}
	if err := checkAll("first batch"); err != nil {
		return err
	}
	if err := batch(); err != nil {
		return err
	}
	if err := km.kill(runArgs...); err != nil {
		return err
	}
	if err := km.cli(runArgs...); err != nil {
		return err
	}
	if err := checkAll("after the rerun"); err != nil {
		return err
	}
	if err := km.cli("maintain", "--plan", km.planPath()); err != nil {
		return err
	}
	if err := checkAll("after maintain"); err != nil {
		return err
	}
	return km.checkAfterMaintain()
}

// watch: one watcher cycle loads two files; two more files, a watcher
// killed, another cycle. Every row lands once, the bad row of each file is
// one open exception.
func (km *kmRun) watch() error {
	km.dir = km.t.TempDir()
	if err := km.writeApproved(watchPlan + kmMaintenance); err != nil {
		return err
	}
	want := map[string]int{}
	bad := map[string]int{}
	nextID := 1
	drop := func(name string) {
		var b strings.Builder
		b.WriteString("id,qty\n")
		for r := 0; r < 5+km.rng.IntN(20); r++ {
			q := km.rng.IntN(1000)
			fmt.Fprintf(&b, "%d,%d\n", nextID, q)
			want[fmt.Sprintf("id=%d|qty=%d", nextID, q)]++
			nextID++
		}
		b.WriteString("oops,1\n")
		bad[name+" oops,1"]++
		dropFile(km.t, km.dir, name, b.String())
	}
	args := []string{"run", "--watch", "--interval", "200ms", "--force", "--plan", km.planPath()}
	checkAll := func(what string) error {
		tbl, err := km.icebergTable("events")
		if err != nil {
			return err
		}
		got, err := kmIcebergRows(context.Background(), tbl)
		if err != nil {
			return err
		}
		open, err := km.kmOpenExceptions("events")
		if err != nil {
			return err
		}
		return errors.Join(kmSameRows(what, got, want), kmSameSet(what, open, bad))
	}
	// cycle runs a watcher until the lake and the queue are the
	// reference's (30 s at most: a watcher that never finishes the job
	// fails), then stops it with SIGTERM; it must exit 0.
	cycle := func() error {
		km.step("watch cycle")
		cmd := exec.Command(km.bin, args...)
		cmd.Dir = km.dir
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		t0 := time.Now()
		var err error
		for time.Since(t0) < 30*time.Second {
			time.Sleep(300 * time.Millisecond)
			// The banner first: before it, SIGTERM may come before the
			// process has its handler, and its default ends it.
			if !strings.Contains(stderr.String(), "watching every") {
				continue
			}
			if err = checkAll("watcher running"); err == nil {
				break
			}
		}
		km.step("watcher: lake and queue equal the reference after %v (%v)", time.Since(t0).Round(time.Millisecond), err)
		if serr := cmd.Process.Signal(syscall.SIGTERM); serr != nil {
			return serr
		}
		if werr := cmd.Wait(); werr != nil {
			return fmt.Errorf("watch: %v\n%s", werr, tail(stderr.String(), 2000))
		}
		return nil
	}
	drop("a.csv")
	drop("b.csv")
	if err := cycle(); err != nil {
		return err
	}
	if err := checkAll("first cycle"); err != nil {
		return err
	}
	drop("c.csv")
	drop("d.csv")
	if km.c.point != "" {
		// A fault point is met only once the watcher commits: let it run
		// until then (a watcher that met none would run for ever).
		if err := km.killWatchAtPoint(args); err != nil {
			return err
		}
	} else if err := km.kill(args...); err != nil {
		return err
	}
	if err := cycle(); err != nil {
		return err
	}
	if err := checkAll("after the rerun"); err != nil {
		return err
	}
	if err := km.cli("maintain", "--plan", km.planPath()); err != nil {
		return err
	}
	if err := checkAll("after maintain"); err != nil {
		return err
	}
	return km.checkAfterMaintain()
}

// killWatchAtPoint runs the watcher armed with the case's fault point and
// waits (20 s at most) for it to die there.
func (km *kmRun) killWatchAtPoint(args []string) error {
	cmd := exec.Command(km.bin, args...)
	cmd.Dir = km.dir
	cmd.Env = append(os.Environ(), "LIMA_FAULTPOINT="+km.c.point)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
	defer timer.Stop()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		km.killed = true
		km.step("watch: killed at %s", km.c.point)
		return nil
	}
	return fmt.Errorf("the watcher was not killed at %s: %v\n%s", km.c.point, err, tail(stderr.String(), 2000))
}

// TestRunRemovesTheMetadataOfACommitKilledMidway: a process killed inside
// its commit (found by the kill matrix: replay@sigkill+490ms) leaves the
// manifest, manifest list and metadata file iceberg-go wrote before the
// catalog took the new metadata — named with iceberg-go's own commit UUID,
// not the write id, and younger than any orphan window. The next run
// removes them from the interrupted staging's record: what is unreferenced
// and written since the staging began goes; an unreferenced file older
// than the staging, and every referenced file, stays.
func TestRunRemovesTheMetadataOfACommitKilledMidway(t *testing.T) {
	ctx := context.Background()
	ws, p := newWorkspace(t, watchPlan+kmMaintenance)
	dropFile(t, ws.Dir, "a.csv", "id,qty\n1,10\n2,20\n")
	runOnce(t, ws, p, flow.RunOptions{})
	sk, err := flow.OpenSink(ctx, ws, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sk.Catalog().LoadTable(ctx, []string{p.Namespace(), "events"})
	sk.Close()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(u.Path, "metadata")
	before := listing(t, meta)
	// The killed process: a staging recorded a minute ago, its commit's
	// files written since; an older stray file from before it.
	st := openLedger(t, ws, p)
	if err := st.BeginStaging(ctx, ledger.Staging{WriteID: uuid.NewString(), Table: p.Namespace() + ".events", Started: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	killed := []string{id + "-m0.avro", "snap-123-0-" + id + ".avro", "00002-" + uuid.NewString() + ".metadata.json"}
	for _, f := range killed {
		plant(t, filepath.Join(meta, f), 0)
	}
	older := filepath.Join(meta, uuid.NewString()+"-m0.avro")
	plant(t, older, 10*time.Minute)
	dropFile(t, ws.Dir, "b.csv", "id,qty\n3,30\n")
	runOnce(t, ws, p, flow.RunOptions{})
	for _, f := range killed {
		if _, err := os.Lstat(filepath.Join(meta, f)); err == nil {
			t.Errorf("%s, written by the killed commit, is still there", f)
		}
	}
	if _, err := os.Lstat(older); err != nil {
		t.Errorf("the unreferenced file older than the staging was removed: %v", err)
	}
	for f := range before {
		if _, err := os.Lstat(filepath.Join(meta, f)); err != nil {
			t.Errorf("%s, referenced, was removed: %v", f, err)
		}
	}
	if got, _ := lakeIDs(t, ws, p, "events"); fmt.Sprint(got) != fmt.Sprint(map[int64]int{1: 1, 2: 1, 3: 1}) {
		t.Errorf("lake ids %v", got)
	}
}
