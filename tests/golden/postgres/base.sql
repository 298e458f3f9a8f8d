-- golden SQL (postgres): the source and the base frequency set: the base scan, class labels, grouped sums, pair counts, SafePub's sample
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: bad_class_labels
CREATE TEMPORARY TABLE "sqlanon_bad" AS
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 3 AS "ok"
  FROM "gen"
)
SELECT
  (
    ARRAY['[20, 40[', '[40, 60[']
  )["q0" + 1] AS "q0",
  (
    ARRAY['130**', '148**']
  )["q1" + 1] AS "q1"
FROM "flagged"
WHERE
  NOT "ok"

-- name: base_frequency_set
SELECT
  CASE WHEN "src"."age" IS NULL THEN 3 ELSE COALESCE("h0"."code", -1) END AS "q0",
  CASE WHEN "src"."zip" IS NULL THEN 3 ELSE COALESCE("h1"."code", -1) END AS "q1",
  "src"."sqlanon_n" AS "cnt"
FROM (
  SELECT
    "src"."age",
    "src"."zip",
    COUNT(*) AS "sqlanon_n"
  FROM "source" AS "src"
  GROUP BY
    "src"."age",
    "src"."zip"
) AS "src"
LEFT JOIN "sqlanon_h0_N" AS "h0"
  ON "h0"."level_0" = CAST("src"."age" AS VARCHAR)
LEFT JOIN "sqlanon_h1_N" AS "h1"
  ON "h1"."level_0" = CAST("src"."zip" AS VARCHAR)

-- name: grouped_pass
CREATE TEMPORARY TABLE "sqlanon_grouped_N" AS
SELECT
  "src"."age",
  "src"."zip",
  COUNT(*) AS "sqlanon_n"
FROM "source" AS "src"
GROUP BY
  "src"."age",
  "src"."zip";

SELECT
  CASE WHEN "src"."age" IS NULL THEN 3 ELSE COALESCE("h0"."code", -1) END AS "q0",
  CASE WHEN "src"."zip" IS NULL THEN 3 ELSE COALESCE("h1"."code", -1) END AS "q1",
  "src"."sqlanon_n" AS "cnt"
FROM "sqlanon_grouped_N" AS "src"
LEFT JOIN "sqlanon_h0_N" AS "h0"
  ON "h0"."level_0" = CAST("src"."age" AS VARCHAR)
LEFT JOIN "sqlanon_h1_N" AS "h1"
  ON "h1"."level_0" = CAST("src"."zip" AS VARCHAR)

-- name: grouped_sums
SELECT
  0 AS "p",
  "q0" AS "a",
  "q1" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0",
  "q1"
UNION ALL
SELECT
  1 AS "p",
  "q0" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0",
  "q2"
UNION ALL
SELECT
  2 AS "p",
  "q1" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1",
  "q2";

SELECT
  0 AS "i",
  "q0" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0"
UNION ALL
SELECT
  1 AS "i",
  "q1" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1"
UNION ALL
SELECT
  2 AS "i",
  "q2" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q2";

SELECT
  0 AS "p",
  "q2" AS "a",
  "q0" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q2",
  "q0"
UNION ALL
SELECT
  1 AS "p",
  "q1" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1",
  "q2"

-- name: pair_counts
SELECT
  "q0",
  "q1",
  CAST(SUM("cnt") AS BIGINT) AS "n"
FROM "sqlanon_fs0_N"
GROUP BY
  GROUPING SETS (
    ("q0", "q1")
  )

-- name: safepub_sample
SELECT
  "n"."age",
  "n"."zip"
FROM (
  SELECT
    "src"."age",
    "src"."zip",
    ROW_NUMBER() OVER (PARTITION BY "src"."age", "src"."zip" ORDER BY "src"."age", "src"."zip") AS "dup"
  FROM people AS "src"
) AS "n"
WHERE
  CAST((
    CAST(HASHTEXTEXTENDED(CAST(ROW("n"."age", "n"."zip", "n"."dup", 5) AS TEXT), 0) AS DOUBLE PRECISION) + 9.223372036854776e+18
  ) AS DOUBLE PRECISION) / 1.8446744073709552e+19 < 0.5934
