// Package migrate converts a Hive-style Parquet table — a key=value folder
// tree on disk or S3, or a table the Glue Data Catalog registers as
// Hive/Parquet — into an Iceberg table, in place (the existing Parquet
// files are added to the Iceberg table as they are) or by rewrite (read
// and written anew under a chosen partition spec), validates the Iceberg
// table against the Hive files partition by partition, and switches the
// Glue entry to the Iceberg table only after validation passed, the files
// are unchanged since and a person typed the table's name. The original
// Glue definition is kept (a backup table and a side record) until an
// explicit drop; rollback restores it. Nothing is ever deleted in S3.
package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// tables
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/engine/sink/hivesink"
	"github.com/lima-lake/lima/internal/fileuri"
	"github.com/lima-lake/lima/internal/s3x"
)

// Errors a caller tells apart.
var (
	// ErrNotHive: the source is not a Hive-style Parquet table.
	ErrNotHive = errors.New("not a Hive-style Parquet table")
	// ErrInPlaceUnsupported: in place cannot give a correct Iceberg table.
	ErrInPlaceUnsupported = errors.New("in place is not possible for this table")
	// ErrChanged: the Hive files or the Glue entry changed since validation.
	ErrChanged = errors.New("the Hive table changed since validation")
	// ErrNotValidated: the switch was asked for without a passing validation.
	ErrNotValidated = errors.New("validation did not pass")
	// ErrNotConfirmed: the typed confirmation differs from the table name.
	ErrNotConfirmed = errors.New("switch not confirmed")
)

// Column is a column of the Hive table.
type Column struct {
	Name     string
	Type     plan.Type
	HiveType string
}

// Partition is one partition: its values in PartitionKeys order (ok false:
// the null partition) and its folder (a local path or an s3:// URI).
type Partition struct {
	Values   []string
	Null     []bool
	Location string
}

// Source is a Hive-style Parquet table.
type Source struct {
	// Kind is "folder" or "glue".
	Kind string
	// Database and Table name the Glue entry (Kind glue).
	Database, Table string
	// Location is the table folder: a local path or an s3:// URI.
	Location string
	// Columns are the data columns as the catalog declares them (Kind
	// glue); empty for a folder (the files say).
	Columns []Column
	// PartitionKeys, in folder order.
	PartitionKeys []Column
	Partitions    []Partition
	// Glue is the Glue entry as read (Kind glue): what the switch replaces
	// and rollback restores.
	Glue *types.Table
	fs   icebergio.IO
}

// Name is how the table is named to people: database.table, or the folder.
func (s *Source) Name() string {
	if s.Kind == "glue" {
		return s.Database + "." + s.Table
	}
	return s.Location
}

// GlueAPI is the part of the Glue client a migration uses.
type GlueAPI interface {
	GetTable(ctx context.Context, in *glue.GetTableInput, optFns ...func(*glue.Options)) (*glue.GetTableOutput, error)
	GetPartitions(ctx context.Context, in *glue.GetPartitionsInput, optFns ...func(*glue.Options)) (*glue.GetPartitionsOutput, error)
	CreateTable(ctx context.Context, in *glue.CreateTableInput, optFns ...func(*glue.Options)) (*glue.CreateTableOutput, error)
	UpdateTable(ctx context.Context, in *glue.UpdateTableInput, optFns ...func(*glue.Options)) (*glue.UpdateTableOutput, error)
	DeleteTable(ctx context.Context, in *glue.DeleteTableInput, optFns ...func(*glue.Options)) (*glue.DeleteTableOutput, error)
}

// localOrURI turns a catalog location into what the file system opens: a
// file:// URI becomes a local path, s3:// stays, s3a:// and s3n:// (Hadoop
// spellings) become s3://.
func localOrURI(loc string) (string, error) {
	loc = strings.TrimRight(loc, "/")
	switch {
	case fileuri.Is(loc):
		return fileuri.ToPath(loc)
	case strings.HasPrefix(loc, "s3a://"), strings.HasPrefix(loc, "s3n://"):
		return "s3://" + loc[len("s3a://"):], nil
	}
	return loc, nil
}

func openFS(ctx context.Context, root string) (icebergio.IO, error) {
	var props map[string]string
	if s3x.IsURI(root) {
		props = s3x.FromEnv().IcebergProps()
		if cfg, err := s3x.FromEnv().AWSConfig(ctx); err == nil {
			ctx = utils.WithAwsConfig(ctx, &cfg)
		}
	}
	fsys, err := icebergio.LoadFS(ctx, props, root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	if _, ok := fsys.(icebergio.ListableIO); !ok {
		return nil, fmt.Errorf("the file system of %s cannot list", root)
	}
	return fsys, nil
}

// hiveType maps a Hive/Glue column type to a plan type.
func hiveType(t string) (plan.Type, error) {
	l := strings.ToLower(strings.TrimSpace(t))
	switch {
	case l == "tinyint", l == "smallint", l == "integer":
		return plan.Type{Kind: plan.Int}, nil
	case l == "float":
		return plan.Type{Kind: plan.Double}, nil
	case strings.HasPrefix(l, "varchar"), strings.HasPrefix(l, "char"):
		return plan.Type{Kind: plan.String}, nil
	}
	return plan.ParseType(l)
}

// FromGlue reads a Hive/Parquet table's definition and partitions from Glue.
func FromGlue(ctx context.Context, g GlueAPI, catalogID, db, name string) (*Source, error) {
	out, err := g.GetTable(ctx, &glue.GetTableInput{CatalogId: optional(catalogID), DatabaseName: aws.String(db), Name: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("glue: get table %s.%s: %w", db, name, err)
	}
	t := out.Table
	if t == nil || t.StorageDescriptor == nil {
		return nil, fmt.Errorf("%w: %s.%s has no storage descriptor", ErrNotHive, db, name)
	}
	if strings.EqualFold(t.Parameters["table_type"], "ICEBERG") {
		return nil, fmt.Errorf("%w: %s.%s is already an Iceberg table", ErrNotHive, db, name)
	}
	if tt := aws.ToString(t.TableType); strings.EqualFold(tt, "VIRTUAL_VIEW") {
		return nil, fmt.Errorf("%w: %s.%s is a view", ErrNotHive, db, name)
	}
	sd := t.StorageDescriptor
	serde := ""
	if sd.SerdeInfo != nil {
		serde = aws.ToString(sd.SerdeInfo.SerializationLibrary)
	}
	if !strings.Contains(strings.ToLower(aws.ToString(sd.InputFormat)+serde), "parquet") {
		return nil, fmt.Errorf("%w: %s.%s is stored as %s, not Parquet", ErrNotHive, db, name, aws.ToString(sd.InputFormat))
	}
	loc, err := localOrURI(aws.ToString(sd.Location))
	if err != nil {
		return nil, fmt.Errorf("%s.%s location: %w", db, name, err)
	}
	src := &Source{Kind: "glue", Database: db, Table: name, Location: loc, Glue: t}
	for _, c := range sd.Columns {
		pt, err := hiveType(aws.ToString(c.Type))
		if err != nil {
			return nil, fmt.Errorf("%s.%s column %s: %w", db, name, aws.ToString(c.Name), err)
		}
		src.Columns = append(src.Columns, Column{Name: aws.ToString(c.Name), Type: pt, HiveType: aws.ToString(c.Type)})
	}
	for _, c := range t.PartitionKeys {
		pt, err := hiveType(aws.ToString(c.Type))
		if err != nil {
			return nil, fmt.Errorf("%s.%s partition key %s: %w", db, name, aws.ToString(c.Name), err)
		}
		src.PartitionKeys = append(src.PartitionKeys, Column{Name: aws.ToString(c.Name), Type: pt, HiveType: aws.ToString(c.Type)})
	}
	var token *string
	for {
		po, err := g.GetPartitions(ctx, &glue.GetPartitionsInput{CatalogId: optional(catalogID), DatabaseName: aws.String(db), TableName: aws.String(name), NextToken: token})
		if err != nil {
			return nil, fmt.Errorf("glue: get partitions of %s.%s: %w", db, name, err)
		}
		for _, p := range po.Partitions {
			if len(p.Values) != len(src.PartitionKeys) {
				return nil, fmt.Errorf("%s.%s: partition %v has %d values for %d keys", db, name, p.Values, len(p.Values), len(src.PartitionKeys))
			}
			part := Partition{Values: append([]string(nil), p.Values...), Null: make([]bool, len(p.Values))}
			for i, v := range p.Values {
				part.Null[i] = v == hivesink.DefaultPartition
			}
			if p.StorageDescriptor == nil || aws.ToString(p.StorageDescriptor.Location) == "" {
				return nil, fmt.Errorf("%s.%s: partition %v has no location", db, name, p.Values)
			}
			if part.Location, err = localOrURI(aws.ToString(p.StorageDescriptor.Location)); err != nil {
				return nil, fmt.Errorf("%s.%s partition %v: %w", db, name, p.Values, err)
			}
			src.Partitions = append(src.Partitions, part)
		}
		if po.NextToken == nil || *po.NextToken == "" {
			break
		}
		token = po.NextToken
	}
	if len(src.PartitionKeys) == 0 {
		src.Partitions = []Partition{{Location: loc}}
	}
	sort.Slice(src.Partitions, func(i, j int) bool {
		return partKey(src.PartitionKeys, src.Partitions[i]) < partKey(src.PartitionKeys, src.Partitions[j])
	})
	if src.fs, err = openFS(ctx, loc); err != nil {
		return nil, err
	}
	return src, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// skipName: folders and files Hive readers skip (_temporary, _SUCCESS,
// .crc, Lima's _lima and _staging).
func skipName(n string) bool { return strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".") }

// FromFolder reads a key=value folder tree (Lima's pattern: hive output
// included). Partition key types are guessed from the values: all
// YYYY-MM-DD dates → date, all integers → bigint, else string (a folder
// declares no types).
func FromFolder(ctx context.Context, root string) (*Source, error) {
	root, err := localOrURI(root)
	if err != nil {
		return nil, err
	}
	fsys, err := openFS(ctx, root)
	if err != nil {
		return nil, err
	}
	src := &Source{Kind: "folder", Location: root, fs: fsys}
	dirs := map[string]bool{}
	var keys []string
	err = fsys.(icebergio.ListableIO).WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := relOf(root, p)
		if rel == "" {
			return nil
		}
		if skipName(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(strings.ToLower(d.Name()), ".parquet") {
			return nil
		}
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		var ks []string
		if dir != "" {
			for _, seg := range strings.Split(dir, "/") {
				k, _, ok := strings.Cut(seg, "=")
				if !ok || k == "" {
					return fmt.Errorf("%w: %s is in folder %q, which is not key=value", ErrNotHive, rel, seg)
				}
				ks = append(ks, k)
			}
		}
		if len(dirs) == 0 {
			keys = ks
		} else if strings.Join(ks, "/") != strings.Join(keys, "/") {
			return fmt.Errorf("%w: %s has partition keys %v, other files %v", ErrNotHive, rel, ks, keys)
		}
		dirs[dir] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no .parquet files below %s", ErrNotHive, root)
	}
	values := make([][]string, len(keys))
	for dir := range dirs {
		part := Partition{Location: joinLoc(root, dir), Null: make([]bool, len(keys))}
		if dir != "" {
			for i, seg := range strings.Split(dir, "/") {
				_, v, _ := strings.Cut(seg, "=")
				u, ok := hivesink.UnescapeValue(v)
				if !ok {
					u = hivesink.DefaultPartition
				}
				part.Values = append(part.Values, u)
				part.Null[i] = !ok
				if ok {
					values[i] = append(values[i], u)
				}
			}
		}
		src.Partitions = append(src.Partitions, part)
	}
	for i, k := range keys {
		src.PartitionKeys = append(src.PartitionKeys, guessKey(k, values[i]))
	}
	sort.Slice(src.Partitions, func(i, j int) bool {
		return partKey(src.PartitionKeys, src.Partitions[i]) < partKey(src.PartitionKeys, src.Partitions[j])
	})
	return src, nil
}

func guessKey(name string, vals []string) Column {
	date, integer := len(vals) > 0, len(vals) > 0
	for _, v := range vals {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			date = false
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			integer = false
		}
	}
	switch {
	case date:
		return Column{Name: name, Type: plan.Type{Kind: plan.Date}, HiveType: "date"}
	case integer:
		return Column{Name: name, Type: plan.Type{Kind: plan.Long}, HiveType: "bigint"}
	}
	return Column{Name: name, Type: plan.Type{Kind: plan.String}, HiveType: "string"}
}

func relOf(root, p string) string {
	p = strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), strings.ReplaceAll(root, "\\", "/"))
	return strings.TrimPrefix(p, "/")
}

func joinLoc(root, rel string) string {
	if rel == "" {
		return root
	}
	return strings.TrimRight(root, "/") + "/" + rel
}

// File is one data file of the Hive table.
type File struct {
	// Path is what the file system opens (local path or s3:// URI).
	Path string
	Size int64
	// ModTime as the listing reports it (S3: LastModified).
	ModTime time.Time
	// Part is the index of its partition in Source.Partitions.
	Part int
}

// Files lists the data files of every partition (names starting with _ or
// . skipped, as Hive readers skip them) and a fingerprint of the listing:
// SHA-256 over every file's path, size and modification time. Two listings
// with the same fingerprint name the same files of the same sizes.
func (s *Source) Files(ctx context.Context) ([]File, string, error) {
	var files []File
	lister := s.fs.(icebergio.ListableIO)
	for i, p := range s.Partitions {
		var walkErr error
		err := lister.WalkDir(p.Location, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := relOf(p.Location, fp)
			if rel == "" {
				return nil
			}
			if d.IsDir() {
				// Only the partition's own folder: a deeper key=value
				// folder is another partition (a table without keys has
				// its files at the top).
				return fs.SkipDir
			}
			if skipName(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, File{Path: fp, Size: info.Size(), ModTime: info.ModTime(), Part: i})
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			walkErr = fmt.Errorf("partition %s: folder %s is missing", partKey(s.PartitionKeys, p), p.Location)
		} else if err != nil {
			walkErr = fmt.Errorf("list %s: %w", p.Location, err)
		}
		if walkErr != nil {
			return nil, "", walkErr
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%q\t%d\t%s\n", f.Path, f.Size, f.ModTime.UTC().Format(time.RFC3339Nano))
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// partKey is the canonical name of a partition: k1=v1/k2=v2 with the
// values as written (null: __HIVE_DEFAULT_PARTITION__), "(table)" for a
// table without partition keys.
func partKey(keys []Column, p Partition) string {
	if len(keys) == 0 {
		return "(table)"
	}
	var parts []string
	for i, k := range keys {
		v, err := canonPartValue(k.Type, p.Values[i], p.Null[i])
		if err != nil {
			v = p.Values[i]
		}
		parts = append(parts, k.Name+"="+v)
	}
	return strings.Join(parts, "/")
}
