CREATE TEMPORARY TABLE "sqlanon_td_prel0_N" AS
SELECT
  COALESCE("d0"."id", -1) AS "j0",
  CAST("src"."sex" AS VARCHAR) AS "x0",
  CAST("src"."disease" AS VARCHAR) AS "yv",
  COUNT(*) AS "cnt",
  SUM(CASE WHEN CAST("src"."disease" AS VARCHAR) = 'hiv' THEN 1 ELSE 0 END) AS "s0"
FROM "source" AS "src"
LEFT JOIN "sqlanon_td_dict0c0_N" AS "d0"
  ON "d0"."label" = CAST("src"."zip" AS VARCHAR)
GROUP BY
  1,
  2,
  3;

CREATE TEMPORARY TABLE "sqlanon_td_part0_N" AS
SELECT
  "j0",
  "x0",
  SUM("cnt") AS "n",
  COUNT(*) AS "a",
  SUM("s0") AS "s0"
FROM "sqlanon_td_prel0_N"
GROUP BY
  "j0",
  "x0";

CREATE TEMPORARY TABLE "sqlanon_td_key0_N" AS
SELECT
  "j0",
  SUM("n") AS "n",
  MIN("a") AS "amin",
  MAX(CAST("s0" AS DOUBLE PRECISION) / CAST("n" AS DOUBLE PRECISION)) AS "sr0"
FROM "sqlanon_td_part0_N"
GROUP BY
  "j0"
