-- golden SQL (duckdb): the top-down search's lossy-join statistics (sqlanon/search/top_down/stats.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: top_down_base1
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

-- name: top_down_factorized
WITH "p1" AS (
  SELECT
    "g0",
    "g1",
    "par",
    SUM("cnt") AS "n",
    MAX(1) AS "a"
  FROM (
    SELECT
      "q0" AS "g0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "g1",
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "par",
      "cnt"
    FROM "sqlanon_td_base_N"
  ) AS "b"
  GROUP BY
    "g0",
    "g1",
    "par"
), "m0" AS (
  SELECT
    "c1",
    "v1"
  FROM (VALUES
    (0, 0),
    (0, 1),
    (1, 2)) AS v(c1, v1)
), "i0" AS (
  SELECT
    "c1",
    "w"
  FROM (VALUES
    (0, 0)) AS v(c1, w)
), "jk" AS (
  SELECT DISTINCT
    "g1"
  FROM "p1"
), "hist" AS (
  SELECT
    "jk"."g1",
    MIN("r1"."amin") AS "amin",
    SUM("r1"."n") AS "nsum"
  FROM "jk"
  INNER JOIN "m0"
    ON "m0"."c1" = "jk"."g1"
  INNER JOIN "sqlanon_td_key0_N" AS "r1"
    ON "r1"."j0" = "m0"."v1"
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM "i0"
      WHERE
        "i0"."c1" = "jk"."g1" AND "i0"."w" = "r1"."j0"
    )
  GROUP BY
    "jk"."g1"
), "xr" AS (
  SELECT
    "p"."g0",
    "p"."g1",
    "p"."par",
    "p"."a" * "h"."amin" AS "ay",
    "p"."n" * "h"."nsum" AS "ax"
  FROM "p1" AS "p"
  INNER JOIN "hist" AS "h"
    ON "p"."g1" = "h"."g1"
)
SELECT
  "par",
  MIN("ay") AS "ay",
  SUM("ax") AS "ax"
FROM "xr"
GROUP BY
  "par";

WITH "p1" AS (
  SELECT
    "g0",
    "g1",
    SUM("cnt") AS "n",
    MAX(1) AS "a"
  FROM (
    SELECT
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "g0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "g1",
      "cnt"
    FROM "sqlanon_td_base_N"
  ) AS "b"
  GROUP BY
    "g0",
    "g1"
), "m0" AS (
  SELECT
    "c1",
    "v1"
  FROM (VALUES
    (0, 0),
    (0, 1),
    (1, 2)) AS v(c1, v1)
), "i0" AS (
  SELECT
    "c1",
    "w"
  FROM (VALUES
    (0, 0)) AS v(c1, w)
), "jk" AS (
  SELECT DISTINCT
    "g1"
  FROM "p1"
), "hist" AS (
  SELECT
    "jk"."g1",
    MIN("r1"."amin") AS "amin",
    SUM("r1"."n") AS "nsum"
  FROM "jk"
  INNER JOIN "m0"
    ON "m0"."c1" = "jk"."g1"
  INNER JOIN "sqlanon_td_key0_N" AS "r1"
    ON "r1"."j0" = "m0"."v1"
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM "i0"
      WHERE
        "i0"."c1" = "jk"."g1" AND "i0"."w" = "r1"."j0"
    )
  GROUP BY
    "jk"."g1"
), "xr" AS (
  SELECT
    "p"."g0",
    "p"."g1",
    "p"."a" * "h"."amin" AS "ay",
    "p"."n" * "h"."nsum" AS "ax"
  FROM "p1" AS "p"
  INNER JOIN "hist" AS "h"
    ON "p"."g1" = "h"."g1"
)
SELECT
  *
FROM (
  SELECT
    -1 AS "attr",
    -1 AS "code",
    MIN("ay") AS "ay",
    SUM("ax") AS "ax"
  FROM "xr"
  UNION ALL
  SELECT
    0 AS "attr",
    "g0" AS "code",
    MIN("ay") AS "ay",
    SUM("ax") AS "ax"
  FROM "xr"
  GROUP BY
    "g0"
) AS "u"

-- name: top_down_pairs
WITH "p1y" AS (
  SELECT
    "g0",
    "g1",
    "par",
    "yv",
    SUM("cnt") AS "cnt"
  FROM (
    SELECT
      "q0" AS "g0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "g1",
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "par",
      "yv",
      "cnt"
    FROM "sqlanon_td_base_N"
  ) AS "b"
  GROUP BY
    "g0",
    "g1",
    "par",
    "yv"
), "p1" AS (
  SELECT
    "g0",
    "g1",
    "par",
    SUM("cnt") AS "n",
    COUNT(*) AS "a"
  FROM "p1y"
  GROUP BY
    "g0",
    "g1",
    "par"
), "m0" AS (
  SELECT
    "c1",
    "v1"
  FROM (VALUES
    (0, 0),
    (0, 1),
    (1, 2)) AS v(c1, v1)
), "i0" AS (
  SELECT
    "c1",
    "w"
  FROM (VALUES
    (0, 0)) AS v(c1, w)
), "t" AS (
  SELECT
    "p"."g0" AS "g0",
    "p"."g1" AS "g1",
    "p"."par" AS "par",
    "p"."n" AS "n0",
    "p"."a" AS "a0",
    "r1"."j0" AS "r1_j0",
    "r1"."x0" AS "r1_x0",
    "r1"."n" AS "n1",
    "r1"."a" AS "a1",
    "r1"."s0" AS "s0"
  FROM "p1" AS "p"
  INNER JOIN "m0"
    ON "m0"."c1" = "p"."g1"
  INNER JOIN "sqlanon_td_part0_N" AS "r1"
    ON "r1"."j0" = "m0"."v1"
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM "i0"
      WHERE
        "i0"."c1" = "p"."g1" AND "i0"."w" = "r1"."j0"
    )
), "xl0" AS (
  SELECT
    "g0",
    "r1_x0",
    "par",
    SUM("n0" * "n1") AS "ax",
    SUM("s0" * "n0") AS "axy0"
  FROM "t"
  GROUP BY
    "g0",
    "r1_x0",
    "par"
), "d" AS (
  SELECT DISTINCT
    "g0",
    "r1_x0",
    "par",
    "g0",
    "g1",
    "r1_j0",
    "r1_x0"
  FROM "t"
), "yd" AS (
  SELECT
    "d"."g0",
    "d"."r1_x0",
    "d"."par",
    COUNT(
      DISTINCT CASE
        WHEN '' IS NULL OR COALESCE("y0"."yv", '') IS NULL OR COALESCE("y1"."yv", '') IS NULL
        THEN NULL
        ELSE CONCAT_WS('', COALESCE("y0"."yv", ''), COALESCE("y1"."yv", ''))
      END
    ) AS "ay"
  FROM "d"
  INNER JOIN "p1y" AS "y0"
    ON "d"."g0" = "y0"."g0" AND "d"."g1" = "y0"."g1"
  INNER JOIN "sqlanon_td_prel0_N" AS "y1"
    ON "d"."r1_j0" = "y1"."j0" AND "d"."r1_x0" IS NOT DISTINCT FROM "y1"."x0"
  GROUP BY
    "d"."g0",
    "d"."r1_x0",
    "d"."par"
), "xl" AS (
  SELECT
    "xl0"."g0",
    "xl0"."r1_x0",
    "xl0"."par",
    "xl0"."ax",
    "xl0"."axy0",
    "yd"."ay"
  FROM "xl0"
  INNER JOIN "yd"
    ON "xl0"."g0" IS NOT DISTINCT FROM "yd"."g0"
    AND "xl0"."r1_x0" IS NOT DISTINCT FROM "yd"."r1_x0"
    AND "xl0"."par" IS NOT DISTINCT FROM "yd"."par"
), "xr" AS (
  SELECT
    "g0",
    "r1_x0",
    "par",
    "ay",
    "ax",
    CAST("axy0" AS DOUBLE) / CAST("ax" AS DOUBLE) AS "l0"
  FROM "xl"
)
SELECT
  "par",
  MIN("ay") AS "ay",
  SUM("ax") AS "ax",
  MAX("l0") AS "l0"
FROM "xr"
GROUP BY
  "par";

WITH "p1y" AS (
  SELECT
    "g0",
    "g1",
    "yv",
    SUM("cnt") AS "cnt"
  FROM (
    SELECT
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "g0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "g1",
      "yv",
      "cnt"
    FROM "sqlanon_td_base_N"
  ) AS "b"
  GROUP BY
    "g0",
    "g1",
    "yv"
), "p1" AS (
  SELECT
    "g0",
    "g1",
    SUM("cnt") AS "n",
    COUNT(*) AS "a"
  FROM "p1y"
  GROUP BY
    "g0",
    "g1"
), "m0" AS (
  SELECT
    "c1",
    "v1"
  FROM (VALUES
    (0, 0),
    (0, 1),
    (1, 2)) AS v(c1, v1)
), "i0" AS (
  SELECT
    "c1",
    "w"
  FROM (VALUES
    (0, 0)) AS v(c1, w)
), "t" AS (
  SELECT
    "p"."g0" AS "g0",
    "p"."g1" AS "g1",
    "p"."n" AS "n0",
    "p"."a" AS "a0",
    "r1"."j0" AS "r1_j0",
    "r1"."x0" AS "r1_x0",
    "r1"."n" AS "n1",
    "r1"."a" AS "a1",
    "r1"."s0" AS "s0"
  FROM "p1" AS "p"
  INNER JOIN "m0"
    ON "m0"."c1" = "p"."g1"
  INNER JOIN "sqlanon_td_part0_N" AS "r1"
    ON "r1"."j0" = "m0"."v1"
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM "i0"
      WHERE
        "i0"."c1" = "p"."g1" AND "i0"."w" = "r1"."j0"
    )
), "xl0" AS (
  SELECT
    "g0",
    "r1_x0",
    SUM("n0" * "n1") AS "ax",
    SUM("s0" * "n0") AS "axy0"
  FROM "t"
  GROUP BY
    "g0",
    "r1_x0"
), "d" AS (
  SELECT DISTINCT
    "g0",
    "r1_x0",
    "g0",
    "g1",
    "r1_j0",
    "r1_x0"
  FROM "t"
), "yd" AS (
  SELECT
    "d"."g0",
    "d"."r1_x0",
    COUNT(
      DISTINCT CASE
        WHEN '' IS NULL OR COALESCE("y0"."yv", '') IS NULL OR COALESCE("y1"."yv", '') IS NULL
        THEN NULL
        ELSE CONCAT_WS('', COALESCE("y0"."yv", ''), COALESCE("y1"."yv", ''))
      END
    ) AS "ay"
  FROM "d"
  INNER JOIN "p1y" AS "y0"
    ON "d"."g0" = "y0"."g0" AND "d"."g1" = "y0"."g1"
  INNER JOIN "sqlanon_td_prel0_N" AS "y1"
    ON "d"."r1_j0" = "y1"."j0" AND "d"."r1_x0" IS NOT DISTINCT FROM "y1"."x0"
  GROUP BY
    "d"."g0",
    "d"."r1_x0"
), "xl" AS (
  SELECT
    "xl0"."g0",
    "xl0"."r1_x0",
    "xl0"."ax",
    "xl0"."axy0",
    "yd"."ay"
  FROM "xl0"
  INNER JOIN "yd"
    ON "xl0"."g0" IS NOT DISTINCT FROM "yd"."g0"
    AND "xl0"."r1_x0" IS NOT DISTINCT FROM "yd"."r1_x0"
), "xr" AS (
  SELECT
    "g0",
    "r1_x0",
    "ay",
    "ax",
    CAST("axy0" AS DOUBLE) / CAST("ax" AS DOUBLE) AS "l0"
  FROM "xl"
)
SELECT
  *
FROM (
  SELECT
    -1 AS "attr",
    -1 AS "code",
    MIN("ay") AS "ay",
    SUM("ax") AS "ax",
    MAX("l0") AS "l0"
  FROM "xr"
  UNION ALL
  SELECT
    0 AS "attr",
    "g0" AS "code",
    MIN("ay") AS "ay",
    SUM("ax") AS "ax",
    MAX("l0") AS "l0"
  FROM "xr"
  GROUP BY
    "g0"
) AS "u";

WITH "p1y" AS (
  SELECT
    "g0",
    "g1",
    "yv",
    SUM("cnt") AS "cnt"
  FROM (
    SELECT
      LIST_EXTRACT([0, 0, 1], "q0" + 1) AS "g0",
      LIST_EXTRACT([0, 0, 1], "q1" + 1) AS "g1",
      "yv",
      "cnt"
    FROM "sqlanon_td_base_N"
  ) AS "b"
  GROUP BY
    "g0",
    "g1",
    "yv"
), "p1" AS (
  SELECT
    "g0",
    "g1",
    SUM("cnt") AS "n",
    COUNT(*) AS "a"
  FROM "p1y"
  GROUP BY
    "g0",
    "g1"
), "m0" AS (
  SELECT
    "c1",
    "v1"
  FROM (VALUES
    (0, 0),
    (0, 1),
    (1, 2)) AS v(c1, v1)
), "i0" AS (
  SELECT
    "c1",
    "w"
  FROM (VALUES
    (0, 0)) AS v(c1, w)
), "t" AS (
  SELECT
    "p"."g0" AS "g0",
    "p"."g1" AS "g1",
    "p"."n" AS "n0",
    "p"."a" AS "a0",
    "r1"."j0" AS "r1_j0",
    "r1"."x0" AS "r1_x0",
    "r1"."n" AS "n1",
    "r1"."a" AS "a1",
    "r1"."s0" AS "s0"
  FROM "p1" AS "p"
  INNER JOIN "m0"
    ON "m0"."c1" = "p"."g1"
  INNER JOIN "sqlanon_td_part0_N" AS "r1"
    ON "r1"."j0" = "m0"."v1"
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM "i0"
      WHERE
        "i0"."c1" = "p"."g1" AND "i0"."w" = "r1"."j0"
    )
), "xl0" AS (
  SELECT
    "g0",
    "r1_x0",
    SUM("n0" * "n1") AS "ax",
    SUM("s0" * "n0") AS "axy0"
  FROM "t"
  GROUP BY
    "g0",
    "r1_x0"
), "d" AS (
  SELECT DISTINCT
    "g0",
    "r1_x0",
    "g0",
    "g1",
    "r1_j0",
    "r1_x0"
  FROM "t"
), "yd" AS (
  SELECT
    "d"."g0",
    "d"."r1_x0",
    COUNT(
      DISTINCT CASE
        WHEN '' IS NULL OR COALESCE("y0"."yv", '') IS NULL OR COALESCE("y1"."yv", '') IS NULL
        THEN NULL
        ELSE CONCAT_WS('', COALESCE("y0"."yv", ''), COALESCE("y1"."yv", ''))
      END
    ) AS "ay"
  FROM "d"
  INNER JOIN "p1y" AS "y0"
    ON "d"."g0" = "y0"."g0" AND "d"."g1" = "y0"."g1"
  INNER JOIN "sqlanon_td_prel0_N" AS "y1"
    ON "d"."r1_j0" = "y1"."j0" AND "d"."r1_x0" IS NOT DISTINCT FROM "y1"."x0"
  GROUP BY
    "d"."g0",
    "d"."r1_x0"
), "xl" AS (
  SELECT
    "xl0"."g0",
    "xl0"."r1_x0",
    "xl0"."ax",
    "xl0"."axy0",
    "yd"."ay"
  FROM "xl0"
  INNER JOIN "yd"
    ON "xl0"."g0" IS NOT DISTINCT FROM "yd"."g0"
    AND "xl0"."r1_x0" IS NOT DISTINCT FROM "yd"."r1_x0"
), "xr" AS (
  SELECT
    "g0",
    "r1_x0",
    "ay",
    "ax",
    CAST("axy0" AS DOUBLE) / CAST("ax" AS DOUBLE) AS "l0"
  FROM "xl"
)
SELECT
  "g0",
  "r1_x0",
  "ay",
  "ax",
  "l0"
FROM "xr"
ORDER BY
  "l0" DESC
LIMIT 1

-- name: top_down_previous
CREATE TEMPORARY TABLE "sqlanon_td_prel0_N" AS
SELECT
  COALESCE("d0"."id", -1) AS "j0",
  CAST("src"."sex" AS TEXT) AS "x0",
  CAST("src"."disease" AS TEXT) AS "yv",
  COUNT(*) AS "cnt",
  SUM(CASE WHEN CAST("src"."disease" AS TEXT) = 'hiv' THEN 1 ELSE 0 END) AS "s0"
FROM READ_CSV(
  'fixtures/people.csv',
  delim := ',',
  header := TRUE,
  auto_detect := FALSE,
  quote := '"',
  escape := '"',
  "columns" := {'id': 'VARCHAR', 'age': 'VARCHAR', 'zip': 'VARCHAR', 'sex': 'VARCHAR', 'disease': 'VARCHAR', 'salary': 'VARCHAR'}
) AS "src"
LEFT JOIN "sqlanon_td_dict0c0_N" AS "d0"
  ON "d0"."label" = CAST("src"."zip" AS TEXT)
GROUP BY
  1,
  2,
  3;

CREATE TEMPORARY TABLE "sqlanon_td_part0_N" AS
SELECT
  "j0",
  "x0",
  SUM("cnt") AS "n",
  COUNT(*) AS "a",
  SUM("s0") AS "s0"
FROM "sqlanon_td_prel0_N"
GROUP BY
  "j0",
  "x0";

CREATE TEMPORARY TABLE "sqlanon_td_key0_N" AS
SELECT
  "j0",
  SUM("n") AS "n",
  MIN("a") AS "amin",
  MAX(CAST("s0" AS DOUBLE) / CAST("n" AS DOUBLE)) AS "sr0"
FROM "sqlanon_td_part0_N"
GROUP BY
  "j0"
