SELECT
  MIN("q0"),
  MAX("q0"),
  MIN("q1"),
  MAX("q1")
FROM "sqlanon_bu_vid_N"
WHERE
  "cnt" = 1;

WITH "anon" AS (
  SELECT
    "q0",
    "q1"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "cnt" = 1
), "heads1" AS (
  SELECT DISTINCT
    "q0"
  FROM "anon"
), "seg1" AS (
  SELECT
    COUNT(DISTINCT "v"."q1") AS "k"
  FROM "sqlanon_bu_vid_N" AS "v"
  INNER JOIN "heads1" AS "h"
    ON "v"."q0" = "h"."q0"
  WHERE
    "v"."q1" IN (1, 2)
  GROUP BY
    "h"."q0"
), "stray1" AS (
  SELECT
    COUNT(*) AS "n"
  FROM "anon"
  WHERE
    NOT (
      "q1" IN (1, 2)
    )
)
SELECT
  1 AS "lvl",
  MIN("s"."k") AS "min_k",
  COUNT(*) AS "segments",
  MAX("x"."n") AS "stray"
FROM "seg1" AS "s"
CROSS JOIN "stray1" AS "x";

SELECT
  "cnt",
  COUNT(*)
FROM "sqlanon_bu_vid_N"
WHERE
  "cnt" < 3
GROUP BY
  "cnt"
