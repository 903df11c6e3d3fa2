package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lima-lake/lima/engine/source/dynamo"
)

// initDynamoSource checks a dynamodb:TABLE source as init checks a folder:
// the table must answer DescribeTable (dynamodb:* : ListTables must
// answer). It returns a line for the terminal.
func initDynamoSource(table string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := dynamo.FromEnv()
	cl, err := dynamo.NewClient(ctx, cfg)
	if err != nil {
		return "", dbRefusedError{err}
	}
	if table == "*" {
		out, err := cl.ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			return "", dbRefusedError{fmt.Errorf("ListTables (%s): %w", cfg.Describe(), err)}
		}
		more := ""
		if out.LastEvaluatedTableName != nil {
			more = " or more"
		}
		return fmt.Sprintf("dynamodb:* (%s): %d table(s)%s; gate 3 proposes a lake table for each", cfg.Describe(), len(out.TableNames), more), nil
	}
	ti, err := dynamo.Describe(ctx, cl, table)
	if err != nil {
		return "", dbRefusedError{fmt.Errorf("DescribeTable %s (%s): %w", table, cfg.Describe(), err)}
	}
	mode := fmt.Sprintf("provisioned %d read units/s", ti.ProvisionedRCU)
	if ti.OnDemand {
		mode = "on demand"
	}
	return fmt.Sprintf("dynamodb:%s (%s): %s, %s, about %d items, key %v; gate 3 proposes the table from its items", table, cfg.Describe(), ti.Status, mode, ti.ItemCount, ti.Keys), nil
}
