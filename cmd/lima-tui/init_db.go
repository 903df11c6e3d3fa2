package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lima-lake/lima/engine/plan"
	"github.com/lima-lake/lima/gates"
)

// initDBSource checks a database source named env:NAME as init checks a
// folder: the variable must hold a DSN Lima recognises (its kind decides
// the source's kind: postgres or mysql), and the database must answer and
// list its tables. It returns a line for the terminal; neither it nor the
// error ever contains the DSN or its password.
func initDBSource(envVar string) (string, error) {
	kind, err := gates.DSNKindOf(envVar)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := gates.CheckDatabase(ctx, envVar, &plan.Source{Kind: kind, DSNEnv: envVar})
	if err != nil {
		return "", dbRefusedError{err}
	}
	where := "the file"
	if len(sum.Schemas) > 0 {
		where = "schema(s) " + strings.Join(sum.Schemas, ", ")
	}
	return fmt.Sprintf("env:%s: %s (kind %s), %d table(s) in %s; gate 3 proposes the tables from them", envVar, sum.Version, kind, sum.Tables, where), nil
}

// dbRefusedError is a database that did not answer or refused the login:
// the answer was understood, a precondition failed (exit 4, not 2).
type dbRefusedError struct{ error }

func (e dbRefusedError) Unwrap() error { return e.error }
