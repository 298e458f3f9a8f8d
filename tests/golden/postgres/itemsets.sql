-- golden SQL (postgres): the KRIMP itemset miner's statements
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: itemsets_encode
CREATE TEMPORARY TABLE "sqlanon_gen_raw_N" AS
SELECT
  CAST("src"."sex" AS VARCHAR) AS "v0",
  CAST("src"."disease" AS VARCHAR) AS "v1",
  CAST("src"."salary" AS VARCHAR) AS "v2",
  COUNT(*) AS "cnt"
FROM "source" AS "src"
GROUP BY
  CAST("src"."sex" AS VARCHAR),
  CAST("src"."disease" AS VARCHAR),
  CAST("src"."salary" AS VARCHAR);

SELECT
  0 AS "c",
  "v0" AS "v",
  SUM("cnt") AS "n"
FROM "sqlanon_gen_raw_N"
GROUP BY
  "v0"
UNION ALL
SELECT
  1 AS "c",
  "v1" AS "v",
  SUM("cnt") AS "n"
FROM "sqlanon_gen_raw_N"
GROUP BY
  "v1"
UNION ALL
SELECT
  2 AS "c",
  "v2" AS "v",
  SUM("cnt") AS "n"
FROM "sqlanon_gen_raw_N"
GROUP BY
  "v2";

CREATE TEMPORARY TABLE "sqlanon_gen_fs_N" AS
SELECT
  "t0"."item" AS "c0",
  "t1"."item" AS "c1",
  "t2"."item" AS "c2",
  "r"."cnt"
FROM "sqlanon_gen_raw_N" AS "r"
INNER JOIN "sqlanon_gen_items_N" AS "t0"
  ON "t0"."c" = 0 AND "t0"."v" IS NOT DISTINCT FROM "r"."v0"
INNER JOIN "sqlanon_gen_items_N" AS "t1"
  ON "t1"."c" = 1 AND "t1"."v" IS NOT DISTINCT FROM "r"."v1"
INNER JOIN "sqlanon_gen_items_N" AS "t2"
  ON "t2"."c" = 2 AND "t2"."v" IS NOT DISTINCT FROM "r"."v2"

-- name: itemsets_level
SELECT
  "c0",
  "c1",
  "c2",
  SUM("cnt") AS "sup",
  MIN("c0") <> MAX("c0") AS "d0",
  MIN("c1") <> MAX("c1") AS "d1",
  MIN("c2") <> MAX("c2") AS "d2"
FROM "sqlanon_gen_fs_N"
GROUP BY
  GROUPING SETS (
    ("c0", "c1"),
    ("c0", "c2"),
    ("c1", "c2")
  )
HAVING
  SUM("cnt") >= 2;

SELECT
  "c0",
  "c1",
  "c2",
  SUM("cnt") AS "sup"
FROM "sqlanon_gen_fs_N"
GROUP BY
  GROUPING SETS (
    ("c0"),
    ("c1"),
    ("c2")
  )
HAVING
  SUM("cnt") >= 2
