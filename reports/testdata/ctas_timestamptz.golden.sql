CREATE TABLE "erp_quality"."mart_receipts_by_day"
WITH (
  table_type = 'ICEBERG',
  location = 's3://acme-lake/erp_quality/mart_receipts_by_day/',
  is_external = false
) AS
WITH "rows" AS (
  SELECT
    CAST(date_trunc('day', "t0"."received_at" AT TIME ZONE 'UTC') AS date) AS "received_day",
    "t0"."qty" AS "m1"
  FROM "erp_quality"."receipts" AS "t0"
)
SELECT
  "received_day",
  CAST(sum("m1") AS bigint) AS "total_qty"
FROM "rows"
GROUP BY "received_day"
