-- golden SQL (postgres): one lattice node, one statement: each privacy model's predicate and each metric's aggregates
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: node_cm
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "y",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "y",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "y"
), "gy" AS (
  SELECT
    "q0",
    "q1",
    "y",
    SUM("cnt") AS "cnt"
  FROM "gen"
  GROUP BY
    "q0",
    "q1",
    "y"
), "cls_y" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    MAX("cnt") AS "maxy"
  FROM "gy"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "cls_y"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "cnt" - "maxy" ELSE 0 END) AS "cm_released",
  SUM("cnt" - "maxy") AS "cm_all"
FROM "flagged"

-- name: node_distinct_l_diversity
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "s",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "s",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "s"
), "cls_s" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    COUNT(*) AS "distinct_s"
  FROM "gen"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AND "distinct_s" >= 2 AS "ok"
  FROM "cls_s"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"

-- name: node_entropy_l_diversity
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "s",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "s",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "s"
), "cls_s" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    SUM(CAST("cnt" AS DOUBLE PRECISION) * LN(CAST("cnt" AS DOUBLE PRECISION))) AS "nlogn_s"
  FROM "gen"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    LN(CAST("cnt" AS DOUBLE PRECISION)) - "nlogn_s" / CAST("cnt" AS DOUBLE PRECISION) >= 0.40546510710816436 AS "ok"
  FROM "cls_s"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"

-- name: node_k_anonymity
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "gen"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"

-- name: node_lm
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "gen"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(
    CASE
      WHEN "ok"
      THEN "cnt" * (
        (
          ARRAY[0.5, 0.0]
        )["q0" + 1] + (
          ARRAY[0.5, 0.0]
        )["q1" + 1]
      )
      ELSE 0.0
    END
  ) AS "lm_released"
FROM "flagged"

-- name: node_t_closeness_equal
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "s",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "s",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "s"
), "gsq" AS (
  SELECT
    "q0",
    "q1",
    "x"."s",
    "cnt",
    SUM("cnt") OVER (PARTITION BY "q0", "q1") AS "tot",
    "d"."q"
  FROM "gen" AS "x"
  JOIN "sqlanon_sdom_N" AS "d"
    ON "x"."s" = "d"."s"
), "cls_s" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    0.5 * (
      SUM(
        ABS(CAST("cnt" AS DOUBLE PRECISION) / CAST("tot" AS DOUBLE PRECISION) - "q") - "q"
      ) + 1
    ) AS "emd_equal"
  FROM "gsq"
  GROUP BY
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "emd_equal" <= 0.300000001 AS "ok"
  FROM "cls_s"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"

-- name: node_t_closeness_ordered
WITH "gen" AS (
  SELECT
    "q0",
    "q1",
    "s",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM (
    SELECT
      (
        ARRAY[0, 0, 1]
      )["q0" + 1] AS "q0",
      (
        ARRAY[0, 0, 1]
      )["q1" + 1] AS "q1",
      "s",
      "cnt"
    FROM "sqlanon_fs0_N"
  ) AS "r"
  GROUP BY
    "q0",
    "q1",
    "s"
), "cls_s" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt"
  FROM "gen"
  GROUP BY
    "q0",
    "q1"
), "keys" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "tot"
  FROM "gen"
  GROUP BY
    "q0",
    "q1"
), "grid" AS (
  SELECT
    "k"."q0",
    "k"."q1",
    "d"."rnk",
    CAST(COALESCE("x"."cnt", 0) AS DOUBLE PRECISION) / CAST("k"."tot" AS DOUBLE PRECISION) - "d"."q" AS "diff"
  FROM "keys" AS "k"
  CROSS JOIN "sqlanon_sdom_N" AS "d"
  LEFT JOIN "gen" AS "x"
    ON "x"."q0" = "k"."q0" AND "x"."q1" = "k"."q1" AND "x"."s" = "d"."s"
), "cum" AS (
  SELECT
    "q0",
    "q1",
    "rnk",
    SUM("diff") OVER (
      PARTITION BY "q0", "q1"
      ORDER BY "rnk"
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS "c"
  FROM "grid"
), "emd" AS (
  SELECT
    "q0",
    "q1",
    CAST(SUM(CASE WHEN "rnk" < 3 THEN ABS("c") ELSE 0.0 END) AS DOUBLE PRECISION) / 2.0 AS "emd_ordered"
  FROM "cum"
  GROUP BY
    "q0",
    "q1"
), "cls" AS (
  SELECT
    "cls_s"."q0",
    "cls_s"."q1",
    "cls_s"."cnt",
    "emd"."emd_ordered"
  FROM "cls_s"
  INNER JOIN "emd"
    ON "cls_s"."q0" = "emd"."q0" AND "cls_s"."q1" = "emd"."q1"
), "flagged" AS (
  SELECT
    *,
    "emd_ordered" <= 0.300000001 AS "ok"
  FROM "cls"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes"
FROM "flagged"
