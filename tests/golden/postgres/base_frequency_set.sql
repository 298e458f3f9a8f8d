SELECT
  "q0",
  "q1",
  COUNT(*) AS "cnt"
FROM (
  SELECT
    CASE WHEN "src"."age" IS NULL THEN 3 ELSE COALESCE("h0"."code", -1) END AS "q0",
    CASE WHEN "src"."zip" IS NULL THEN 3 ELSE COALESCE("h1"."code", -1) END AS "q1"
  FROM "source" AS "src"
  LEFT JOIN "sqlanon_h0_N" AS "h0"
    ON "h0"."level_0" = CAST("src"."age" AS VARCHAR)
  LEFT JOIN "sqlanon_h1_N" AS "h1"
    ON "h1"."level_0" = CAST("src"."zip" AS VARCHAR)
) AS "enc"
GROUP BY
  "q0",
  "q1"
