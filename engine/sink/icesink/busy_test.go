package icesink_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/lima-lake/lima/engine/sink/icesink"
)

// TestOpenWaitsForAnotherWriter: opening the catalog while another process
// holds its write lock (a run committing) waits for the lock instead of
// failing with "database is locked".
func TestOpenWaitsForAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	o := icesink.Options{CatalogPath: filepath.Join(dir, ".lima", "catalog.db"), Warehouse: filepath.Join(dir, "lake")}
	sk, err := icesink.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sk.Close()
	db, err := sql.Open("sqlite", "file:"+o.CatalogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = conn.ExecContext(context.Background(), "COMMIT")
		close(released)
	}()
	start := time.Now()
	sk, err = icesink.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open while another writer held the lock: %v", err)
	}
	sk.Close()
	<-released
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("open returned after %v, before the other writer let go", d)
	}
}
