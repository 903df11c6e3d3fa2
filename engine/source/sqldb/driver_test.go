package sqldb

import (
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestMySQLURL(t *testing.T) {
	tests := []struct {
		url                          string
		user, pass, addr, db, tlsCfg string
	}{
		{"mysql://root@127.0.0.1:3306/test", "root", "", "127.0.0.1:3306", "test", ""},
		{"mysql://app:p%40ss%3Aw0rd@db.internal/crm?tls=true", "app", "p@ss:w0rd", "db.internal:3306", "crm", "true"},
		{"MariaDB://u:x@[::1]:3307/", "u", "x", "[::1]:3307", "", ""},
	}
	for _, tt := range tests {
		dsn, ok := mysqlURL(tt.url)
		if !ok {
			t.Fatalf("%s: not converted", tt.url)
		}
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s → %s: %v", tt.url, dsn, err)
		}
		if cfg.User != tt.user || cfg.Passwd != tt.pass || cfg.Addr != tt.addr || cfg.DBName != tt.db || cfg.TLSConfig != tt.tlsCfg || cfg.Net != "tcp" {
			t.Errorf("%s → %+v", tt.url, cfg)
		}
	}
	if _, ok := mysqlURL("root@tcp(127.0.0.1:3306)/test"); ok {
		t.Error("a go-sql-driver DSN was taken for a URL")
	}
}
