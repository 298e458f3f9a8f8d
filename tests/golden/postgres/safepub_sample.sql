SELECT
  "n"."age",
  "n"."zip"
FROM (
  SELECT
    "src"."age",
    "src"."zip",
    ROW_NUMBER() OVER (PARTITION BY "src"."age", "src"."zip" ORDER BY "src"."age", "src"."zip") AS "dup"
  FROM people AS "src"
) AS "n"
WHERE
  CAST((
    CAST(HASHTEXTEXTENDED(CAST(ROW("n"."age", "n"."zip", "n"."dup", 5) AS TEXT), 0) AS DOUBLE PRECISION) + 9.223372036854776e+18
  ) AS DOUBLE PRECISION) / 1.8446744073709552e+19 < 0.5934
