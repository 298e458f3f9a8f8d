-- golden SQL (duckdb): the release query (sqlanon/release/write.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: release_select
SELECT
  "src"."id",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m0"."value" END AS "age",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m1"."value" END AS "zip",
  "src"."sex",
  "src"."disease",
  "src"."salary"
FROM READ_CSV(
  'fixtures/people.csv',
  delim := ',',
  header := TRUE,
  auto_detect := FALSE,
  quote := '"',
  escape := '"',
  "columns" := {'id': 'VARCHAR', 'age': 'VARCHAR', 'zip': 'VARCHAR', 'sex': 'VARCHAR', 'disease': 'VARCHAR', 'salary': 'VARCHAR'}
) AS "src"
INNER JOIN "sqlanon_map0" AS "m0"
  ON "m0"."leaf" = CAST("src"."age" AS TEXT)
INNER JOIN "sqlanon_map1" AS "m1"
  ON "m1"."leaf" = CAST("src"."zip" AS TEXT)
LEFT JOIN "sqlanon_bad" AS "b"
  ON "b"."q0" = "m0"."value" AND "b"."q1" = "m1"."value"

-- name: release_select_from_base
SELECT
  "age",
  "zip"
FROM (
  SELECT
    "age",
    "zip",
    UNNEST(RANGE("sqlanon_count")) AS "sqlanon_repeat"
  FROM (
    SELECT
      CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m0"."value" END AS "age",
      CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m1"."value" END AS "zip",
      "g"."cnt" AS "sqlanon_count"
    FROM "sqlanon_fs0_N" AS "g"
    INNER JOIN "sqlanon_map0" AS "m0"
      ON "m0"."leaf_code" = "g"."q0"
    INNER JOIN "sqlanon_map1" AS "m1"
      ON "m1"."leaf_code" = "g"."q1"
    LEFT JOIN "sqlanon_bad" AS "b"
      ON "b"."q0" = "m0"."value" AND "b"."q1" = "m1"."value"
  ) AS "v"
) AS "r"

-- name: release_select_nulls
SELECT
  "src"."id",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m0"."value" END AS "age",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m1"."value" END AS "zip",
  "src"."sex",
  "src"."disease",
  "src"."salary"
FROM (
  SELECT
    *
  FROM READ_CSV(
    'fixtures/people.csv',
    delim := ',',
    header := TRUE,
    auto_detect := FALSE,
    quote := '"',
    escape := '"',
    "columns" := {'id': 'VARCHAR', 'age': 'VARCHAR', 'zip': 'VARCHAR', 'sex': 'VARCHAR', 'disease': 'VARCHAR', 'salary': 'VARCHAR'}
  ) AS "src"
  WHERE
    NOT (
      "src"."age" IS NULL
    )
) AS "src"
INNER JOIN "sqlanon_map0" AS "m0"
  ON "m0"."leaf" = CAST("src"."age" AS TEXT)
INNER JOIN "sqlanon_map1" AS "m1"
  ON "m1"."leaf" = COALESCE(CAST("src"."zip" AS TEXT), 'sqlanon:NULL')
LEFT JOIN "sqlanon_bad" AS "b"
  ON "b"."q0" = "m0"."value" AND "b"."q1" = COALESCE("m1"."value", 'sqlanon:NULL')
UNION ALL
SELECT
  "src"."id",
  '*' AS "age",
  '*' AS "zip",
  "src"."sex",
  "src"."disease",
  "src"."salary"
FROM READ_CSV(
  'fixtures/people.csv',
  delim := ',',
  header := TRUE,
  auto_detect := FALSE,
  quote := '"',
  escape := '"',
  "columns" := {'id': 'VARCHAR', 'age': 'VARCHAR', 'zip': 'VARCHAR', 'sex': 'VARCHAR', 'disease': 'VARCHAR', 'salary': 'VARCHAR'}
) AS "src"
WHERE
  "src"."age" IS NULL
