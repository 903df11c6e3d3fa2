package flow_test

import "github.com/apache/arrow-go/v18/arrow/decimal128"

type decimal128Num = decimal128.Num

func decimal128FromI64(v int64) decimal128.Num { return decimal128.FromI64(v) }
