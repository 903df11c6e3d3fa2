package migrate_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/lima-lake/lima/engine/migrate"
	"github.com/lima-lake/lima/engine/sink/icesink"
	"github.com/lima-lake/lima/internal/s3test"

	mt "github.com/lima-lake/lima/internal/migratetest"
)

// TestMigrateS3Folder: a key=value tree on the loopback S3 server (keys
// also in the files) migrated in place — the Iceberg table's data files
// are the S3 objects — and by rewrite into an S3 warehouse; the
// independent read gives the written truth either way, and validation
// passes.
func TestMigrateS3Folder(t *testing.T) {
	cl := s3test.Client(t)
	bucket := s3test.Bucket(t, cl)
	s3test.SetEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	local := filepath.Join(dir, "orders")
	want := mt.WriteHive(t, local, true)
	if err := filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		s3test.PutFile(t, cl, bucket, "hive/orders/"+filepath.ToSlash(rel), p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	src, err := migrate.FromFolder(ctx, "s3://"+bucket+"/hive/orders")
	if err != nil {
		t.Fatal(err)
	}
	files, fp, err := src.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range mt.Parts {
		n += p.Files
	}
	if len(files) != n || len(src.Partitions) != len(mt.Parts) {
		t.Fatalf("%d files in %d partitions listed, %d in %d written", len(files), len(src.Partitions), n, len(mt.Parts))
	}
	l, err := migrate.Resolve(ctx, src, files)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := icesink.Open(ctx, icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: "s3://" + bucket + "/lake"})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	for _, method := range []string{migrate.InPlace, migrate.Rewrite} {
		tgt := migrate.Target{Sink: sk, Namespace: "migrated", Name: "orders_" + map[string]string{migrate.InPlace: "inplace", migrate.Rewrite: "rewrite"}[method]}
		var b *migrate.Built
		if method == migrate.InPlace {
			b, err = migrate.BuildInPlace(ctx, src, l, files, tgt, "migrate-s3-1")
		} else {
			b, err = migrate.BuildRewrite(ctx, src, l, files, tgt, nil, "migrate-s3-2", nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		mt.SameTruth(t, want, mt.Independent(t, ctx, b.Table.MetadataLocation()))
		v, err := migrate.Validate(ctx, src, l, files, fp, b.Table, nil)
		if err != nil || !v.OK {
			t.Fatalf("%s: validation %v %+v", method, err, v)
		}
	}
}
