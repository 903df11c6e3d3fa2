package gluetest

import (
	"encoding/json"
	"sync"
)

// Table definitions as sent: CreateTable and UpdateTable keep the
// TableInput the client sent, every field of it (Retention, LastAccessTime,
// TargetTable, … that Table does not model), and GetTable answers with it,
// as Glue does. RawTableInput gives it back in canonical JSON, so a test
// can compare a definition before and after (a migration's rollback) byte
// for byte.

type rawState struct {
	nested bool
	inputs map[string]map[string]any // db.table -> TableInput as sent
}

var raws sync.Map // *Server -> *rawState (the Server's mutex guards it)

func (s *Server) raw() *rawState {
	v, _ := raws.LoadOrStore(s, &rawState{inputs: map[string]map[string]any{}})
	return v.(*rawState)
}

// RawTableInput is the stored TableInput of a table in canonical JSON
// (keys sorted), with the VersionId Glue assigned; false when the table
// was not created or updated through the protocol.
func (s *Server) RawTableInput(db, name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.raw().inputs[db+"."+name]
	if !ok {
		return nil, false
	}
	b, _ := json.Marshal(in)
	return b, true
}

// migrateOp wraps the table operations to keep the definitions as sent;
// done is false for every other operation (and inside the wrap).
func (s *Server) migrateOp(op string, body []byte) (out any, aerr *apiError, done bool) {
	st := s.raw()
	if st.nested {
		return nil, nil, false
	}
	switch op {
	case "CreateTable", "UpdateTable", "DeleteTable", "GetTable":
	default:
		return nil, nil, false
	}
	var in struct {
		DatabaseName string
		Name         string
		TableInput   map[string]any
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, errf("InvalidInputException", "body: %v", err), true
	}
	st.nested = true
	out, aerr = s.handle(op, body)
	st.nested = false
	if aerr != nil {
		return nil, aerr, true
	}
	switch op {
	case "CreateTable", "UpdateTable":
		name, _ := in.TableInput["Name"].(string)
		st.inputs[in.DatabaseName+"."+name] = in.TableInput
	case "DeleteTable":
		delete(st.inputs, in.DatabaseName+"."+in.Name)
	case "GetTable":
		raw, ok := st.inputs[in.DatabaseName+"."+in.Name]
		if !ok {
			return out, nil, true
		}
		t := s.tables[in.DatabaseName][in.Name]
		merged := map[string]any{}
		for k, v := range raw {
			merged[k] = v
		}
		merged["DatabaseName"], merged["VersionId"] = t.DatabaseName, t.VersionId
		return map[string]any{"Table": merged}, nil, true
	}
	return out, nil, true
}
