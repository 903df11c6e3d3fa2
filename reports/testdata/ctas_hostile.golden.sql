CREATE TABLE "db""x"."mart_m""; --"
WITH (
  table_type = 'ICEBERG',
  location = 's3://b/it''s/',
  is_external = false
) AS
WITH "rows" AS (
  SELECT
    "t0"."x""; DROP TABLE suppliers; --" AS "dim"""
  FROM "db""x"."facts" AS "t0"
)
SELECT
  "dim""",
  count(*) AS "n"
FROM "rows"
GROUP BY "dim"""
