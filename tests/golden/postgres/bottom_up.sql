-- golden SQL (postgres): the bottom-up search's statements (sqlanon/search/bottom_up/stats.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: bottom_up_candidates
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

-- name: bottom_up_info_loss
SELECT
  0 AS "attr",
  2 AS "parent",
  CAST((
    (
      CASE
        WHEN SUM("cnt") > 0
        THEN CAST(SUM("cnt") AS DOUBLE PRECISION) * LN(CAST(SUM("cnt") AS DOUBLE PRECISION))
        ELSE 0.0
      END - (
        CASE
          WHEN SUM("y0") > 0
          THEN CAST(SUM("y0") AS DOUBLE PRECISION) * LN(CAST(SUM("y0") AS DOUBLE PRECISION))
          ELSE 0.0
        END + CASE
          WHEN SUM("y1") > 0
          THEN CAST(SUM("y1") AS DOUBLE PRECISION) * LN(CAST(SUM("y1") AS DOUBLE PRECISION))
          ELSE 0.0
        END
      )
    ) - (
      SUM(
        CASE
          WHEN "cnt" > 0
          THEN CAST("cnt" AS DOUBLE PRECISION) * LN(CAST("cnt" AS DOUBLE PRECISION))
          ELSE 0.0
        END
      ) - (
        SUM(
          CASE
            WHEN "y0" > 0
            THEN CAST("y0" AS DOUBLE PRECISION) * LN(CAST("y0" AS DOUBLE PRECISION))
            ELSE 0.0
          END
        ) + SUM(
          CASE
            WHEN "y1" > 0
            THEN CAST("y1" AS DOUBLE PRECISION) * LN(CAST("y1" AS DOUBLE PRECISION))
            ELSE 0.0
          END
        )
      )
    )
  ) AS DOUBLE PRECISION) / (
    CAST(SUM("cnt") AS DOUBLE PRECISION) * 0.6931471805599453
  ) AS "info_loss",
  CAST(SUM("cnt") AS BIGINT) AS "rp"
FROM (
  SELECT
    "q0" AS "c",
    SUM("y0") AS "y0",
    SUM("y1") AS "y1",
    SUM("cnt") AS "cnt"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "q0" IN (0, 1)
  GROUP BY
    "q0"
) AS "ch"
UNION ALL
SELECT
  1 AS "attr",
  3 AS "parent",
  CAST((
    (
      CASE
        WHEN SUM("cnt") > 0
        THEN CAST(SUM("cnt") AS DOUBLE PRECISION) * LN(CAST(SUM("cnt") AS DOUBLE PRECISION))
        ELSE 0.0
      END - (
        CASE
          WHEN SUM("y0") > 0
          THEN CAST(SUM("y0") AS DOUBLE PRECISION) * LN(CAST(SUM("y0") AS DOUBLE PRECISION))
          ELSE 0.0
        END + CASE
          WHEN SUM("y1") > 0
          THEN CAST(SUM("y1") AS DOUBLE PRECISION) * LN(CAST(SUM("y1") AS DOUBLE PRECISION))
          ELSE 0.0
        END
      )
    ) - (
      SUM(
        CASE
          WHEN "cnt" > 0
          THEN CAST("cnt" AS DOUBLE PRECISION) * LN(CAST("cnt" AS DOUBLE PRECISION))
          ELSE 0.0
        END
      ) - (
        SUM(
          CASE
            WHEN "y0" > 0
            THEN CAST("y0" AS DOUBLE PRECISION) * LN(CAST("y0" AS DOUBLE PRECISION))
            ELSE 0.0
          END
        ) + SUM(
          CASE
            WHEN "y1" > 0
            THEN CAST("y1" AS DOUBLE PRECISION) * LN(CAST("y1" AS DOUBLE PRECISION))
            ELSE 0.0
          END
        )
      )
    )
  ) AS DOUBLE PRECISION) / (
    CAST(SUM("cnt") AS DOUBLE PRECISION) * 0.6931471805599453
  ) AS "info_loss",
  CAST(SUM("cnt") AS BIGINT) AS "rp"
FROM (
  SELECT
    "q1" AS "c",
    SUM("y0") AS "y0",
    SUM("y1") AS "y1",
    SUM("cnt") AS "cnt"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "q1" IN (1, 2)
  GROUP BY
    "q1"
) AS "ch"

-- name: bottom_up_probe
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
  "kind",
  "cnt",
  COUNT(*) AS "n"
FROM (
  SELECT
    'o' AS "kind",
    CASE WHEN "cnt" < 3 THEN "cnt" ELSE 3 END AS "cnt"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "q0" IN (0, 1)
  UNION ALL
  SELECT
    'n',
    CASE WHEN "cnt" < 3 THEN "cnt" ELSE 3 END AS "cnt"
  FROM (
    SELECT
      CAST(SUM("cnt") AS BIGINT) AS "cnt"
    FROM "sqlanon_bu_vid_N"
    WHERE
      "q0" IN (0, 1)
    GROUP BY
      "q1"
  ) AS "m"
) AS "g"
GROUP BY
  "kind",
  "cnt";

SELECT
  "kind",
  "cnt",
  COUNT(*) AS "n"
FROM (
  SELECT
    'o' AS "kind",
    CASE WHEN "cnt" < 3 THEN "cnt" ELSE 3 END AS "cnt"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "q0" IN (0, 1)
  UNION ALL
  SELECT
    'n',
    CASE WHEN "cnt" < 3 THEN "cnt" ELSE 3 END AS "cnt"
  FROM "sqlanon_bu_vid_N"
  WHERE
    "q0" = 2
) AS "g"
GROUP BY
  "kind",
  "cnt"

-- name: bottom_up_vid_table
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
