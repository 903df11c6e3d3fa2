CREATE TABLE "erp_quality"."mart_quality_by_country"
WITH (
  table_type = 'ICEBERG',
  location = 's3://acme-lake/erp_quality/mart_quality_by_country/',
  is_external = false
) AS
WITH "rows" AS (
  SELECT
    "t1"."country" AS "country",
    "t0"."cost" AS "m1",
    "t1"."annual_budget" AS "m2",
    "t1"."supplier_id" AS "k2",
    "t1"."supplier_id" AS "m3",
    "t1"."supplier_id" AS "k3"
  FROM "erp_quality"."inspections" AS "t0"
  LEFT JOIN "erp_quality"."suppliers" AS "t1" ON "t1"."supplier_id" = "t0"."supplier_id"
), "agg" AS (
  SELECT "country", CAST(sum("m1") AS decimal(38,3)) AS "a1"
  FROM "rows"
  GROUP BY "country"
), "pre2" AS (
  SELECT "country", CAST(sum("m2") AS bigint) AS "v"
  FROM (SELECT DISTINCT "country", "k2", "m2" FROM "rows" WHERE "k2" IS NOT NULL)
  GROUP BY "country"
), "pre3" AS (
  SELECT "country", count("m3") AS "v"
  FROM (SELECT DISTINCT "country", "k3", "m3" FROM "rows" WHERE "k3" IS NOT NULL)
  GROUP BY "country"
)
SELECT
  "agg"."country" AS "country",
  "agg"."a1" AS "total_cost",
  "pre2"."v" AS "budget",
  coalesce("pre3"."v", 0) AS "suppliers"
FROM "agg"
LEFT JOIN "pre2" ON "agg"."country" IS NOT DISTINCT FROM "pre2"."country"
LEFT JOIN "pre3" ON "agg"."country" IS NOT DISTINCT FROM "pre3"."country"
