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
