WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "s",
    SUM("cnt") AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "s",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "s"
), "gsq" AS (
  SELECT
    "q0",
    "q1",
    "x"."s",
    "cnt",
    SUM("cnt") OVER (PARTITION BY "q0", "q1") AS "tot",
    "d"."q"
  FROM "gen" AS "x"
  JOIN "sqlanon_sdom_N" AS "d"
    ON "x"."s" = "d"."s"
), "cls_s" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    0.5 * (
      SUM(
        ABS(CAST("cnt" AS DOUBLE PRECISION) / CAST("tot" AS DOUBLE PRECISION) - "q") - "q"
      ) + 1
    ) AS "emd_equal"
  FROM "gsq"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "emd_equal" <= 0.300000001 AS "ok"
  FROM "cls_s"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"
