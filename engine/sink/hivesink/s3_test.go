package hivesink_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lima-lake/lima/engine/sink"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/engine/sink/sinktest"
	"github.com/lima-lake/lima/internal/s3test"
)

// s3Parquet lists the .parquet keys under prefix, relative to it.
func s3Parquet(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	cl := s3test.Client(t)
	objs, err := cl.List(context.Background(), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".parquet") {
			out = append(out, strings.TrimPrefix(o.Key, prefix))
		}
	}
	return out
}

// TestInterruptedPublishOnS3 is TestInterruptedPublish with the warehouse
// on the loopback S3 server, where publishing is copy + delete: a process
// killed before the manifest leaves no committed file, the next OpenTable
// removes what it published, and the rerun commits the load exactly once.
func TestInterruptedPublishOnS3(t *testing.T) {
	cl := s3test.Client(t)
	s3test.SetEnv(t)
	for _, point := range []string{hivesink.FaultBeforePublish, hivesink.FaultMidPublish, hivesink.FaultAfterManifest} {
		t.Run(point, func(t *testing.T) {
			bucket := s3test.Bucket(t, cl)
			wh := "s3://" + bucket + "/wh"
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashCommit$", "-test.count=1")
			cmd.Env = append(os.Environ(), "HIVESINK_CRASH_DIR="+wh, "LIMA_FAULTPOINT="+point)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				t.Fatalf("the helper was not killed: %v\n%s", err, out)
			}
			table := "wh/lake/visits/"
			published := 0
			for _, f := range s3Parquet(t, bucket, table) {
				if !strings.HasPrefix(f, "_staging/") {
					published++
				}
			}
			committed := point == hivesink.FaultAfterManifest
			if (point == hivesink.FaultBeforePublish) != (published == 0) {
				t.Fatalf("%d files published at %s", published, point)
			}
			sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: wh})
			if err != nil {
				t.Fatal(err)
			}
			if has, err := sk.HasLoad(context.Background(), "lake", "visits", "ld-crash"); err != nil || has != committed {
				t.Fatalf("HasLoad = %v %v, want %v", has, err, committed)
			}
			_, tbl := open(t, wh, hivesink.Options{})
			if len(tbl.Recovered) != 1 {
				t.Fatalf("recovered %v, want one entry", tbl.Recovered)
			}
			for _, f := range s3Parquet(t, bucket, table) {
				if strings.HasPrefix(f, "_staging/") || !committed {
					t.Errorf("%s left after recovery", f)
				}
			}
			st, err := tbl.Stage(context.Background(), rowsOf(tbl.Schema(), crashRows(), 10))
			if err != nil {
				t.Fatal(err)
			}
			c, err := tbl.Commit(context.Background(), st, sink.CommitProps{LoadID: "ld-crash", RunID: "r2"})
			if err != nil {
				t.Fatal(err)
			}
			if c.AlreadyCommitted != committed {
				t.Fatalf("rerun: already committed = %v, want %v", c.AlreadyCommitted, committed)
			}
			if committed {
				st.Discard(context.Background())
			}
			if n := len(scanAll(t, tbl)); n != len(crashRows()) {
				t.Fatalf("%d rows after the rerun, want %d", n, len(crashRows()))
			}
			if n := len(s3Parquet(t, bucket, table)); n != 2 {
				t.Fatalf("%d data objects after the rerun, want 2 (one per partition)", n)
			}
		})
	}
}

// TestConformanceOnS3 runs the sink conformance suite with the warehouse on
// the loopback S3 server.
func TestConformanceOnS3(t *testing.T) {
	cl := s3test.Client(t)
	s3test.SetEnv(t)
	sinktest.Run(t, func(t *testing.T) sink.Sink {
		bucket := s3test.Bucket(t, cl)
		sk, err := hivesink.Open(context.Background(), hivesink.Options{Warehouse: "s3://" + bucket + "/lake"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sk.Close() })
		return sk
	})
}
