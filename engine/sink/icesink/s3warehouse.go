package icesink

import (
	"github.com/apache/iceberg-go"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses

	"github.com/lima-lake/lima/internal/s3x"
)

// catalogProps are the SQL catalog's properties: the warehouse and, for a
// warehouse on S3, the FileIO properties of s3x.Config.IcebergProps
// (endpoint, region, path-style addressing). They are catalog properties in
// memory: iceberg-go does not write them into table metadata, and Lima
// writes no credential into a table property or snapshot summary.
func catalogProps(warehouse string, cfg *s3x.Config) iceberg.Properties {
	props := iceberg.Properties{"warehouse": warehouse}
	if !s3x.IsURI(warehouse) {
		return props
	}
	c := s3x.FromEnv()
	if cfg != nil {
		c = *cfg
	}
	for k, v := range c.IcebergProps() {
		props[k] = v
	}
	return props
}
