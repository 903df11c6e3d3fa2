// Package dynamotest gives integration tests a DynamoDB emulator on
// loopback (dynalite, started by scripts/ensure-dynamodb.sh), a fresh table
// per test (deleted when the test ends) and a generator of items of every
// attribute type whose counts and sums it computes itself.
//
// The emulator is found through LIMA_TEST_DYNAMODB_ENDPOINT (default
// http://127.0.0.1:8000) and LIMA_TEST_DYNAMODB_REGION. When it does not
// answer, the test is skipped loudly — or fails under CI or
// LIMA_REQUIRE_SERVICES=1.
package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lima-lake/lima/engine/source/dynamo"
	"github.com/lima-lake/lima/internal/s3x"
)

// Defaults of scripts/ensure-dynamodb.sh.
const (
	DefaultEndpoint = "http://127.0.0.1:8000"
	DefaultRegion   = "us-east-1"
	// The emulator checks no signature; the SDK needs some key to sign.
	accessKey = "limatest"
	secretKey = "limatest-loopback-only"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Config is the emulator's configuration.
func Config() dynamo.Config {
	return dynamo.Config{Endpoint: env("LIMA_TEST_DYNAMODB_ENDPOINT", DefaultEndpoint), Region: env("LIMA_TEST_DYNAMODB_REGION", DefaultRegion),
		StaticKey: &s3x.StaticKey{AccessKeyID: accessKey, SecretAccessKey: secretKey}}
}

// SetEnv points the product (which reads the environment) at the
// emulator with t.Setenv: AWS_ENDPOINT_URL_DYNAMODB, the region and a
// throwaway key. It leaves AWS_ENDPOINT_URL alone (the S3 tests' server).
func SetEnv(t testing.TB) {
	t.Helper()
	c := Config()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": c.Endpoint, "AWS_REGION": c.Region,
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	}
}

func required() bool {
	return os.Getenv("CI") != "" || os.Getenv("LIMA_REQUIRE_SERVICES") == "1"
}

// Client returns a client of the emulator, skipping (or failing under CI /
// LIMA_REQUIRE_SERVICES=1) when it does not answer.
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := Config()
	cl, err := dynamo.NewClient(ctx, c)
	if err == nil {
		_, err = cl.ListTables(ctx, &dynamodb.ListTablesInput{})
	}
	if err != nil {
		msg := "DynamoDB emulator at %s unusable: %v (scripts/ensure-dynamodb.sh starts dynalite there; LIMA_TEST_DYNAMODB_ENDPOINT points elsewhere)"
		if required() {
			t.Fatalf("DYNAMODB INTEGRATION TEST FAILED: "+msg, c.Endpoint, err)
		}
		t.Skipf("SKIPPING DYNAMODB INTEGRATION TEST: "+msg+" (set CI or LIMA_REQUIRE_SERVICES=1 to make this a failure)", c.Endpoint, err)
	}
	return cl
}

// TableSpec says how Table creates a table.
type TableSpec struct {
	// Hash and Range are the key attributes with their types ("S", "N").
	Hash, HashType, Range, RangeType string
	// RCU > 0: provisioned with that read capacity; 0: on demand.
	RCU int64
}

// Table creates a uniquely named table, waits until it is ACTIVE and
// deletes it when the test ends.
func Table(t testing.TB, cl *dynamodb.Client, spec TableSpec) string {
	t.Helper()
	var b [5]byte
	_, _ = rand.Read(b[:])
	name := "lima-test-" + hex.EncodeToString(b[:])
	in := &dynamodb.CreateTableInput{TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(spec.Hash), AttributeType: types.ScalarAttributeType(spec.HashType)}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(spec.Hash), KeyType: types.KeyTypeHash}}}
	if spec.Range != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(spec.Range), AttributeType: types.ScalarAttributeType(spec.RangeType)})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(spec.Range), KeyType: types.KeyTypeRange})
	}
	if spec.RCU > 0 {
		in.BillingMode = types.BillingModeProvisioned
		in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(spec.RCU), WriteCapacityUnits: aws.Int64(1000)}
	} else {
		in.BillingMode = types.BillingModePayPerRequest
	}
	ctx := context.Background()
	if _, err := cl.CreateTable(ctx, in); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() {
		if _, err := cl.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Logf("dynamotest: delete table %s: %v", name, err)
		}
	})
	w := dynamodb.NewTableExistsWaiter(cl, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 200*time.Millisecond
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		t.Fatalf("table %s never became ACTIVE: %v", name, err)
	}
	return name
}

// Seed writes items with BatchWriteItem (25 a request, unprocessed items
// retried).
func Seed(t testing.TB, cl *dynamodb.Client, table string, items []map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(items); i += 25 {
		var reqs []types.WriteRequest
		for _, it := range items[i:min(i+25, len(items))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		pending := map[string][]types.WriteRequest{table: reqs}
		for try := 0; len(pending[table]) > 0; try++ {
			if try > 20 {
				t.Fatalf("BatchWriteItem: items still unprocessed after %d tries", try)
			}
			out, err := cl.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				t.Fatalf("BatchWriteItem: %v", err)
			}
			pending = out.UnprocessedItems
		}
	}
}

// Expected are a generated table's counts and sums, computed by the
// generator from the integers it drew (never by parsing what it wrote).
type Expected struct {
	Items int64
	// QtySum is the sum of qty (long); AmountCents the sum of amount
	// (decimal(p,2)) in hundredths; BigSum the sum of big (integers above
	// a long's range: decimal(20,0)).
	QtySum      int64
	AmountCents int64
	BigSum      *big.Int
	// WithNote counts the items that have the optional attribute note
	// (the others have none: a null in the lake).
	WithNote int64
	// FlagTrue counts flag = true.
	FlagTrue int64
}

// Amount is the decimal text of hundredths c.
func Amount(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// Generate makes n items of every attribute type from seed: pk (S,
// partition key), sk (N, sort key), qty (N, long), amount (N, two
// decimals), big (N above a long), name (S, Unicode), blob (B), flag
// (BOOL), gone (NULL), tags (SS), scores (NS), bins (BS), attrs (M), list
// (L), and note (S) in about two of three items.
func Generate(seed uint64, n int) ([]map[string]types.AttributeValue, Expected) {
	r := mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	exp := Expected{Items: int64(n), BigSum: new(big.Int)}
	base, _ := new(big.Int).SetString("10000000000000000000", 10) // 1e19 > MaxInt64
	items := make([]map[string]types.AttributeValue, 0, n)
	for i := 0; i < n; i++ {
		qty := r.Int64N(2_000_000) - 1000
		cents := r.Int64N(100_000_000) - 5_000_000
		bg := new(big.Int).Add(base, big.NewInt(r.Int64N(1_000_000_000)))
		flag := r.IntN(2) == 0
		exp.QtySum += qty
		exp.AmountCents += cents
		exp.BigSum.Add(exp.BigSum, bg)
		if flag {
			exp.FlagTrue++
		}
		it := map[string]types.AttributeValue{
			"pk":     &types.AttributeValueMemberS{Value: fmt.Sprintf("cust#%05d", i%997)},
			"sk":     &types.AttributeValueMemberN{Value: fmt.Sprint(i)},
			"qty":    &types.AttributeValueMemberN{Value: fmt.Sprint(qty)},
			"amount": &types.AttributeValueMemberN{Value: Amount(cents)},
			"big":    &types.AttributeValueMemberN{Value: bg.String()},
			"name":   &types.AttributeValueMemberS{Value: fmt.Sprintf("고객 %d ü", i)},
			"blob":   &types.AttributeValueMemberB{Value: []byte{byte(i), 0, byte(i >> 8), 0xff}},
			"flag":   &types.AttributeValueMemberBOOL{Value: flag},
			"gone":   &types.AttributeValueMemberNULL{Value: true},
			"tags":   &types.AttributeValueMemberSS{Value: []string{"z", fmt.Sprintf("t%d", i%7), "a"}},
			"scores": &types.AttributeValueMemberNS{Value: []string{"10", "-1.5", fmt.Sprint(100 + i%13)}},
			"bins":   &types.AttributeValueMemberBS{Value: [][]byte{{2}, {1, byte(i)}}},
			"attrs": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"z": &types.AttributeValueMemberN{Value: "1"}, "a": &types.AttributeValueMemberS{Value: "x"},
				"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberBOOL{Value: true}}}}},
			"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "b"}, &types.AttributeValueMemberN{Value: "2"}, &types.AttributeValueMemberNULL{Value: true}}},
		}
		if i%3 != 0 {
			it["note"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("note %d", i)}
			exp.WithNote++
		}
		items = append(items, it)
	}
	return items, exp
}
