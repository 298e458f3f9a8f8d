SELECT
  2 AS "q0",
  "q1",
  CAST(SUM("y0") AS BIGINT) AS "y0",
  CAST(SUM("y1") AS BIGINT) AS "y1",
  CAST(SUM("cnt") AS BIGINT) AS "cnt"
FROM "sqlanon_bu_vid_N"
WHERE
  "q0" IN (0, 1)
GROUP BY
  "q1";

SELECT
  'o' AS "kind",
  "cnt",
  COUNT(*) AS "n"
FROM "sqlanon_bu_vid_N"
WHERE
  "q0" IN (0, 1) AND "cnt" < 3
GROUP BY
  "cnt"
UNION ALL
SELECT
  'n',
  "cnt",
  COUNT(*)
FROM "sqlanon_bu_new_N"
WHERE
  "cnt" < 3
GROUP BY
  "cnt"
UNION ALL
SELECT
  'O',
  0,
  COUNT(*)
FROM "sqlanon_bu_vid_N"
WHERE
  "q0" IN (0, 1)
UNION ALL
SELECT
  'N',
  0,
  COUNT(*)
FROM "sqlanon_bu_new_N"
UNION ALL
SELECT
  'm',
  MIN("cnt"),
  0
FROM "sqlanon_bu_new_N"
