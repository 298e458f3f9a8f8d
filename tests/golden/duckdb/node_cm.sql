WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "y",
    SUM("cnt") AS "cnt"
  FROM (
    SELECT
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "q0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "q1",
      "y",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "y"
), "gy" AS (
  SELECT
    "q0",
    "q1",
    "y",
    SUM("cnt") AS "cnt"
  FROM "gen"
  GROUP BY
    "q0",
    "q1",
    "y"
), "cls_y" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    MAX("cnt") AS "maxy"
  FROM "gy"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "cls_y"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "cnt" - "maxy" ELSE 0 END) AS "cm_released",
  SUM("cnt" - "maxy") AS "cm_all"
FROM "flagged"
