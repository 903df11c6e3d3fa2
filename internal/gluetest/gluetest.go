// Package gluetest is a local HTTP endpoint that speaks the AWS Glue JSON
// protocol (POST /, X-Amz-Target: AWSGlue.<Operation>,
// application/x-amz-json-1.1) for exactly the operations Lima uses, with
// its state in memory, so tests can point the real aws-sdk-go-v2 Glue
// client (and iceberg-go's Glue catalog) at it and then assert what the
// endpoint received. Signatures are not checked; it is not a Glue emulator
// beyond these operations.
package gluetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Column is a Glue column.
type Column struct {
	Name       string            `json:"Name"`
	Type       string            `json:"Type,omitempty"`
	Comment    string            `json:"Comment,omitempty"`
	Parameters map[string]string `json:"Parameters,omitempty"`
}

// SerDeInfo is a Glue SerDe.
type SerDeInfo struct {
	Name                 string            `json:"Name,omitempty"`
	SerializationLibrary string            `json:"SerializationLibrary,omitempty"`
	Parameters           map[string]string `json:"Parameters,omitempty"`
}

// StorageDescriptor is a Glue storage descriptor.
type StorageDescriptor struct {
	Columns      []Column          `json:"Columns,omitempty"`
	Location     string            `json:"Location,omitempty"`
	InputFormat  string            `json:"InputFormat,omitempty"`
	OutputFormat string            `json:"OutputFormat,omitempty"`
	Compressed   bool              `json:"Compressed,omitempty"`
	SerdeInfo    *SerDeInfo        `json:"SerdeInfo,omitempty"`
	Parameters   map[string]string `json:"Parameters,omitempty"`
}

// Table is a Glue table.
type Table struct {
	Name              string             `json:"Name"`
	DatabaseName      string             `json:"DatabaseName,omitempty"`
	Description       string             `json:"Description,omitempty"`
	TableType         string             `json:"TableType,omitempty"`
	Owner             string             `json:"Owner,omitempty"`
	StorageDescriptor *StorageDescriptor `json:"StorageDescriptor,omitempty"`
	PartitionKeys     []Column           `json:"PartitionKeys,omitempty"`
	Parameters        map[string]string  `json:"Parameters,omitempty"`
	VersionId         string             `json:"VersionId,omitempty"`
}

// Database is a Glue database.
type Database struct {
	Name        string            `json:"Name"`
	Description string            `json:"Description,omitempty"`
	LocationUri string            `json:"LocationUri,omitempty"`
	Parameters  map[string]string `json:"Parameters,omitempty"`
}

// Partition is a Glue partition.
type Partition struct {
	Values            []string           `json:"Values"`
	DatabaseName      string             `json:"DatabaseName,omitempty"`
	TableName         string             `json:"TableName,omitempty"`
	StorageDescriptor *StorageDescriptor `json:"StorageDescriptor,omitempty"`
	Parameters        map[string]string  `json:"Parameters,omitempty"`
}

// MaxBatchPartitions is Glue's limit of BatchCreatePartition.
const MaxBatchPartitions = 100

// Server is the endpoint.
type Server struct {
	srv *httptest.Server

	mu     sync.Mutex
	dbs    map[string]*Database
	tables map[string]map[string]*Table
	parts  map[string]map[string]Partition // db.table -> values key -> partition
	calls  []string
	fail   map[string]string // operation -> error type returned once
}

// New starts the endpoint on loopback; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{dbs: map[string]*Database{}, tables: map[string]map[string]*Table{}, parts: map[string]map[string]Partition{}, fail: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint (AWS_ENDPOINT_URL_GLUE, glue.endpoint).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the endpoint (tests of an unreachable catalog).
func (s *Server) Close() { s.srv.Close() }

// Calls lists the operations received, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// FailNext makes the next call of op fail with the Glue error type errType
// (e.g. AccessDeniedException), with status 400 so the SDK does not retry.
func (s *Server) FailNext(op, errType string) {
	s.mu.Lock()
	s.fail[op] = errType
	s.mu.Unlock()
}

// Database returns a database.
func (s *Server) Database(name string) (Database, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[name]
	if !ok {
		return Database{}, false
	}
	return *d, true
}

// Table returns a table.
func (s *Server) Table(db, name string) (Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[db][name]
	if !ok {
		return Table{}, false
	}
	return *t, true
}

// Tables returns the names of a database's tables, sorted.
func (s *Server) Tables(db string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.tables[db] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// PutDatabase and PutTable plant a database or a table directly (as
// another tool would have created it), for tests of what Lima must leave.
func (s *Server) PutDatabase(d Database) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dbs[d.Name] = &d
	if s.tables[d.Name] == nil {
		s.tables[d.Name] = map[string]*Table{}
	}
}

// PutTable plants a table in an existing database.
func (s *Server) PutTable(db string, t Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.DatabaseName, t.VersionId = db, "1"
	if s.tables[db] == nil {
		s.tables[db] = map[string]*Table{}
	}
	s.tables[db][t.Name] = &t
}

// Partitions returns a table's partitions sorted by their values.
func (s *Server) Partitions(db, table string) []Partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Partition
	for _, p := range s.parts[db+"."+table] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i].Values, "\x00") < strings.Join(out[j].Values, "\x00") })
	return out
}

type apiError struct {
	status int
	typ    string
	msg    string
}

func errf(typ, format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: typ, msg: fmt.Sprintf(format, a...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "AWSGlue.")
	if r.Method != http.MethodPost || !ok {
		writeErr(w, errf("UnknownOperationException", "expected POST with X-Amz-Target AWSGlue.<Operation>, got %s %q", r.Method, target))
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-amz-json-1.1") {
		writeErr(w, errf("SerializationException", "content type %q", ct))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, errf("SerializationException", "%v", err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, op)
	if typ, ok := s.fail[op]; ok {
		delete(s.fail, op)
		writeErr(w, &apiError{status: http.StatusBadRequest, typ: typ, msg: "injected failure"})
		return
	}
	out, aerr := s.dispatch(op, body) // jobs.go: the job operations, then handle
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", "gluetest-"+strconv.Itoa(len(s.calls)))
	if out == nil {
		out = map[string]any{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", e.typ)
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.typ, "Message": e.msg})
}

func (s *Server) handle(op string, body []byte) (any, *apiError) {
	var in struct {
		CatalogId          string
		Name               string
		DatabaseName       string
		DatabaseInput      *Database
		TableInput         *Table
		VersionId          string
		TableName          string
		PartitionInputList []Partition
		NextToken          string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, errf("InvalidInputException", "body: %v", err)
	}
	if out, aerr, done := s.migrateOp(op, body); done { // migrate.go: definitions kept as sent
		return out, aerr
	}
	switch op {
	case "GetDatabase":
		d, ok := s.dbs[in.Name]
		if !ok {
			return nil, errf("EntityNotFoundException", "Database %s not found.", in.Name)
		}
		return map[string]any{"Database": d}, nil
	case "GetDatabases":
		var list []*Database
		for _, d := range s.dbs {
			list = append(list, d)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		return map[string]any{"DatabaseList": list}, nil
	case "CreateDatabase":
		if in.DatabaseInput == nil || in.DatabaseInput.Name == "" {
			return nil, errf("InvalidInputException", "DatabaseInput.Name is required")
		}
		if _, ok := s.dbs[in.DatabaseInput.Name]; ok {
			return nil, errf("AlreadyExistsException", "Database already exists.")
		}
		d := *in.DatabaseInput
		s.dbs[d.Name] = &d
		s.tables[d.Name] = map[string]*Table{}
		return nil, nil
	case "DeleteDatabase":
		// As Glue does: the database goes with its tables and partitions.
		if _, ok := s.dbs[in.Name]; !ok {
			return nil, errf("EntityNotFoundException", "Database %s not found.", in.Name)
		}
		for name := range s.tables[in.Name] {
			delete(s.parts, in.Name+"."+name)
		}
		delete(s.tables, in.Name)
		delete(s.dbs, in.Name)
		return nil, nil
	case "GetTable":
		t, aerr := s.table(in.DatabaseName, in.Name)
		if aerr != nil {
			return nil, aerr
		}
		return map[string]any{"Table": t}, nil
	case "GetTables":
		if _, ok := s.dbs[in.DatabaseName]; !ok {
			return nil, errf("EntityNotFoundException", "Database %s not found.", in.DatabaseName)
		}
		var list []*Table
		for _, t := range s.tables[in.DatabaseName] {
			list = append(list, t)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		return map[string]any{"TableList": list}, nil
	case "CreateTable":
		if _, ok := s.dbs[in.DatabaseName]; !ok {
			return nil, errf("EntityNotFoundException", "Database %s not found.", in.DatabaseName)
		}
		if in.TableInput == nil || in.TableInput.Name == "" {
			return nil, errf("InvalidInputException", "TableInput.Name is required")
		}
		if _, ok := s.tables[in.DatabaseName][in.TableInput.Name]; ok {
			return nil, errf("AlreadyExistsException", "Table already exists.")
		}
		t := *in.TableInput
		t.DatabaseName, t.VersionId = in.DatabaseName, "1"
		s.tables[in.DatabaseName][t.Name] = &t
		return nil, nil
	case "UpdateTable":
		if in.TableInput == nil {
			return nil, errf("InvalidInputException", "TableInput is required")
		}
		cur, aerr := s.table(in.DatabaseName, in.TableInput.Name)
		if aerr != nil {
			return nil, aerr
		}
		if in.VersionId != "" && in.VersionId != cur.VersionId {
			return nil, errf("ConcurrentModificationException", "version %s is not the current version %s", in.VersionId, cur.VersionId)
		}
		v, _ := strconv.Atoi(cur.VersionId)
		t := *in.TableInput
		t.DatabaseName, t.VersionId = in.DatabaseName, strconv.Itoa(v+1)
		s.tables[in.DatabaseName][t.Name] = &t
		return nil, nil
	case "DeleteTable":
		if _, aerr := s.table(in.DatabaseName, in.Name); aerr != nil {
			return nil, aerr
		}
		delete(s.tables[in.DatabaseName], in.Name)
		delete(s.parts, in.DatabaseName+"."+in.Name)
		return nil, nil
	case "BatchCreatePartition":
		t, aerr := s.table(in.DatabaseName, in.TableName)
		if aerr != nil {
			return nil, aerr
		}
		if len(in.PartitionInputList) > MaxBatchPartitions {
			return nil, errf("ValidationException", "1 validation error detected: Value at 'partitionInputList' failed to satisfy constraint: Member must have length less than or equal to %d", MaxBatchPartitions)
		}
		key := in.DatabaseName + "." + in.TableName
		if s.parts[key] == nil {
			s.parts[key] = map[string]Partition{}
		}
		var errs []map[string]any
		for _, p := range in.PartitionInputList {
			if len(p.Values) != len(t.PartitionKeys) {
				errs = append(errs, partErr(p.Values, "InvalidInputException", fmt.Sprintf("%d values for %d partition keys", len(p.Values), len(t.PartitionKeys))))
				continue
			}
			k := strings.Join(p.Values, "\x00")
			if _, ok := s.parts[key][k]; ok {
				errs = append(errs, partErr(p.Values, "AlreadyExistsException", "Partition already exists."))
				continue
			}
			p.DatabaseName, p.TableName = in.DatabaseName, in.TableName
			s.parts[key][k] = p
		}
		if len(errs) == 0 {
			return map[string]any{}, nil
		}
		return map[string]any{"Errors": errs}, nil
	case "GetPartitions":
		if _, aerr := s.table(in.DatabaseName, in.TableName); aerr != nil {
			return nil, aerr
		}
		var list []Partition
		for _, p := range s.parts[in.DatabaseName+"."+in.TableName] {
			list = append(list, p)
		}
		return map[string]any{"Partitions": list}, nil
	}
	return nil, errf("UnknownOperationException", "gluetest does not implement %s", op)
}

func partErr(values []string, code, msg string) map[string]any {
	return map[string]any{"PartitionValues": values, "ErrorDetail": map[string]string{"ErrorCode": code, "ErrorMessage": msg}}
}

func (s *Server) table(db, name string) (*Table, *apiError) {
	if _, ok := s.dbs[db]; !ok {
		return nil, errf("EntityNotFoundException", "Database %s not found.", db)
	}
	t, ok := s.tables[db][name]
	if !ok {
		return nil, errf("EntityNotFoundException", "Table %s not found.", name)
	}
	return t, nil
}
