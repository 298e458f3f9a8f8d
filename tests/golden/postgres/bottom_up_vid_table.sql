CREATE TEMPORARY TABLE "sqlanon_bu_vid_N" AS
SELECT
  (
    ARRAY[0, 0, 1]
  )["q0" + 1] AS "q0",
  (
    ARRAY[0, 1, 1]
  )["q1" + 1] AS "q1",
  CAST(SUM(CASE WHEN "y" = '<=50K' THEN "cnt" ELSE 0 END) AS BIGINT) AS "y0",
  CAST(SUM(CASE WHEN "y" = '>50K' THEN "cnt" ELSE 0 END) AS BIGINT) AS "y1",
  CAST(SUM("cnt") AS BIGINT) AS "cnt"
FROM "sqlanon_fs0_N"
GROUP BY
  (
    ARRAY[0, 0, 1]
  )["q0" + 1],
  (
    ARRAY[0, 1, 1]
  )["q1" + 1]
