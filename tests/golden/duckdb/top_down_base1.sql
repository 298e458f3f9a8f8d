CREATE TEMPORARY TABLE "sqlanon_td_base_N" AS
SELECT
  COALESCE("h0"."code", -1) AS "q0",
  COALESCE("h1"."code", -1) AS "q1",
  CAST("src"."id" AS TEXT) AS "yv",
  CAST("src"."salary" AS TEXT) AS "cls",
  COUNT(*) AS "cnt"
FROM READ_CSV(
  'fixtures/people.csv',
  delim := ',',
  header := TRUE,
  auto_detect := FALSE,
  quote := '"',
  escape := '"',
  "columns" := {'id': 'VARCHAR', 'age': 'VARCHAR', 'zip': 'VARCHAR', 'sex': 'VARCHAR', 'disease': 'VARCHAR', 'salary': 'VARCHAR'}
) AS "src"
LEFT JOIN "sqlanon_h0_N" AS "h0"
  ON "h0"."level_0" = CAST("src"."age" AS TEXT)
LEFT JOIN "sqlanon_h1_N" AS "h1"
  ON "h1"."level_0" = CAST("src"."zip" AS TEXT)
GROUP BY
  1,
  2,
  3,
  4
