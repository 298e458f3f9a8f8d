CREATE TEMPORARY TABLE "sqlanon_bad" AS
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt"
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
