-- golden SQL (postgres): the release query (sqlanon/release/write.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: release_select
SELECT
  "src"."id",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m0"."value" END AS "age",
  CASE WHEN NOT "b"."q0" IS NULL THEN '*' ELSE "m1"."value" END AS "zip",
  "src"."sex",
  "src"."disease",
  "src"."salary"
FROM "source" AS "src"
INNER JOIN "sqlanon_map0" AS "m0"
  ON "m0"."leaf" = CAST("src"."age" AS VARCHAR)
INNER JOIN "sqlanon_map1" AS "m1"
  ON "m1"."leaf" = CAST("src"."zip" AS VARCHAR)
LEFT JOIN "sqlanon_bad" AS "b"
  ON "b"."q0" = "m0"."value" AND "b"."q1" = "m1"."value"

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
  FROM "source" AS "src"
  WHERE
    NOT (
      "src"."age" IS NULL
    )
) AS "src"
INNER JOIN "sqlanon_map0" AS "m0"
  ON "m0"."leaf" = CAST("src"."age" AS VARCHAR)
INNER JOIN "sqlanon_map1" AS "m1"
  ON "m1"."leaf" = COALESCE(CAST("src"."zip" AS VARCHAR), 'sqlanon:NULL')
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
FROM "source" AS "src"
WHERE
  "src"."age" IS NULL
