CREATE TABLE "erp_quality"."mart_inspections_by_supplier_month"
WITH (
  table_type = 'ICEBERG',
  location = 's3://acme-lake/erp_quality/mart_inspections_by_supplier_month/',
  is_external = false
) AS
WITH "rows" AS (
  SELECT
    date_trunc('month', "t0"."inspected_on") AS "inspected_month",
    "t0"."supplier_id" AS "supplier_id",
    "t0"."lot_qty" AS "m1",
    "t0"."cost" AS "m2",
    "t0"."lot_qty" AS "m3"
  FROM "erp_quality"."inspections" AS "t0"
)
SELECT
  "inspected_month",
  "supplier_id",
  CAST(sum("m1") AS bigint) AS "total_lot_qty",
  CAST(sum("m2") AS decimal(38,3)) AS "total_cost",
  CAST(avg(CAST("m3" AS decimal(38,6))) AS decimal(38,6)) AS "avg_lot_qty",
  count(*) AS "row_count"
FROM "rows"
GROUP BY "inspected_month", "supplier_id"
