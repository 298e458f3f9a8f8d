-- golden SQL (postgres): many lattice nodes in one statement (sqlanon/stats/batch.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: node_batch
WITH "w0" AS (
  SELECT
    CAST("q0" AS BIGINT) AS "g0_0",
    CAST((
      ARRAY[0, 0, 1]
    )["q0" + 1] AS BIGINT) AS "g0_1",
    CAST(0 AS BIGINT) AS "g0_2",
    CAST((
      ARRAY[0, 3, 6]
    )["q1" + 1] AS BIGINT) AS "g1_0",
    CAST((
      ARRAY[0, 0, 3]
    )["q1" + 1] AS BIGINT) AS "g1_1",
    CAST(0 AS BIGINT) AS "g1_2",
    "cnt"
  FROM "sqlanon_fs0_N"
), "gen" AS (
  SELECT
    "n"."nid",
    CASE "n"."l0" WHEN 0 THEN "r"."g0_0" WHEN 1 THEN "r"."g0_1" ELSE "r"."g0_2" END + CASE "n"."l1" WHEN 0 THEN "r"."g1_0" WHEN 1 THEN "r"."g1_1" ELSE "r"."g1_2" END AS "k0",
    "r"."cnt"
  FROM "w0" AS "r"
  CROSS JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
), "cls" AS (
  SELECT
    "nid",
    "k0",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM "gen"
  GROUP BY
    "nid",
    "k0"
), "cv" AS (
  SELECT
    "c"."nid",
    "c"."k0",
    "c"."cnt",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "cls" AS "c"
  JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
    ON "c"."nid" = "n"."nid"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "cv"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  "nid"
FROM "flagged"
GROUP BY
  "nid"

-- name: node_batch_branches
WITH "c0" AS (
  SELECT
    CAST("q0" AS BIGINT) + CAST("q1" AS BIGINT) * 3 AS "k0",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM "sqlanon_fs0_N"
  GROUP BY
    "k0"
), "v0" AS (
  SELECT
    "c"."k0",
    "c"."cnt",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "c0" AS "c"
  CROSS JOIN (VALUES
    (0, 0, 0)) AS "n"("nid", "l0", "l1")
), "f0" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "v0"
), "c1" AS (
  SELECT
    CAST((
      ARRAY[0, 0, 1]
    )["q0" + 1] AS BIGINT) + CAST((
      ARRAY[0, 0, 1]
    )["q1" + 1] AS BIGINT) * 3 AS "k0",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM "sqlanon_fs0_N"
  GROUP BY
    "k0"
), "v1" AS (
  SELECT
    "c"."k0",
    "c"."cnt",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "c1" AS "c"
  CROSS JOIN (VALUES
    (1, 1, 1)) AS "n"("nid", "l0", "l1")
), "f1" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "v1"
), "c2" AS (
  SELECT
    CAST((
      ARRAY[0, 0, 1]
    )["q0" + 1] AS BIGINT) + CAST(0 AS BIGINT) * 3 AS "k0",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM "sqlanon_fs0_N"
  GROUP BY
    "k0"
), "v2" AS (
  SELECT
    "c"."k0",
    "c"."cnt",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "c2" AS "c"
  CROSS JOIN (VALUES
    (2, 1, 2)) AS "n"("nid", "l0", "l1")
), "f2" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "v2"
), "c3" AS (
  SELECT
    CAST(0 AS BIGINT) + CAST((
      ARRAY[0, 0, 1]
    )["q1" + 1] AS BIGINT) * 3 AS "k0",
    SUM(CAST("cnt" AS INT)) AS "cnt"
  FROM "sqlanon_fs0_N"
  GROUP BY
    "k0"
), "v3" AS (
  SELECT
    "c"."k0",
    "c"."cnt",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "c3" AS "c"
  CROSS JOIN (VALUES
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
), "f3" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "v3"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  0 AS "nid"
FROM "f0"
UNION ALL
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  1 AS "nid"
FROM "f1"
UNION ALL
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  2 AS "nid"
FROM "f2"
UNION ALL
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  3 AS "nid"
FROM "f3"

-- name: node_batch_histogram
WITH "p0" AS (
  SELECT
    "q0",
    "q1",
    SUM(CASE WHEN "s" = 'cancer' THEN "cnt" ELSE 0 END) AS "h0",
    SUM(CASE WHEN "s" = 'flu' THEN "cnt" ELSE 0 END) AS "h1",
    SUM("cnt") AS "cnt"
  FROM "sqlanon_fs0_N"
  GROUP BY
    "q0",
    "q1"
), "w0" AS (
  SELECT
    CAST("q0" AS BIGINT) AS "g0_0",
    CAST((
      ARRAY[0, 0, 1]
    )["q0" + 1] AS BIGINT) AS "g0_1",
    CAST(0 AS BIGINT) AS "g0_2",
    CAST((
      ARRAY[0, 3, 6]
    )["q1" + 1] AS BIGINT) AS "g1_0",
    CAST((
      ARRAY[0, 0, 3]
    )["q1" + 1] AS BIGINT) AS "g1_1",
    CAST(0 AS BIGINT) AS "g1_2",
    "h0",
    "h1",
    "cnt"
  FROM "p0"
), "gen" AS (
  SELECT
    "n"."nid",
    CASE "n"."l0" WHEN 0 THEN "r"."g0_0" WHEN 1 THEN "r"."g0_1" ELSE "r"."g0_2" END + CASE "n"."l1" WHEN 0 THEN "r"."g1_0" WHEN 1 THEN "r"."g1_1" ELSE "r"."g1_2" END AS "k0",
    "r"."h0",
    "r"."h1",
    "r"."cnt"
  FROM "w0" AS "r"
  CROSS JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
), "cls" AS (
  SELECT
    "nid",
    "k0",
    SUM("h0") AS "h0",
    SUM("h1") AS "h1",
    SUM("cnt") AS "cnt",
    SUM("cnt") - (
      SUM("h0") + SUM("h1")
    ) AS "h2"
  FROM "gen"
  GROUP BY
    "nid",
    "k0"
), "clsh" AS (
  SELECT
    "nid",
    "k0",
    "cnt",
    CASE WHEN "h0" > 0 THEN 1 ELSE 0 END + CASE WHEN "h1" > 0 THEN 1 ELSE 0 END + CASE WHEN "h2" > 0 THEN 1 ELSE 0 END AS "distinct_s",
    CAST("h0" AS DOUBLE PRECISION) * LN(CASE WHEN "h0" > 1 THEN CAST("h0" AS DOUBLE PRECISION) ELSE 1.0 END) + CAST("h1" AS DOUBLE PRECISION) * LN(CASE WHEN "h1" > 1 THEN CAST("h1" AS DOUBLE PRECISION) ELSE 1.0 END) + CAST("h2" AS DOUBLE PRECISION) * LN(CASE WHEN "h2" > 1 THEN CAST("h2" AS DOUBLE PRECISION) ELSE 1.0 END) AS "nlogn_s",
    0.5 * (
      ABS(CAST("h0" AS DOUBLE PRECISION) / CAST("cnt" AS DOUBLE PRECISION) - 0.3) + ABS(CAST("h1" AS DOUBLE PRECISION) / CAST("cnt" AS DOUBLE PRECISION) - 0.5) + ABS(CAST("h2" AS DOUBLE PRECISION) / CAST("cnt" AS DOUBLE PRECISION) - 0.2)
    ) AS "emd_equal",
    CAST((
      ABS((
        CAST("h0" AS DOUBLE PRECISION)
      ) / CAST("cnt" AS DOUBLE PRECISION) - 0.3) + ABS(
        (
          CAST("h0" AS DOUBLE PRECISION) + CAST("h1" AS DOUBLE PRECISION)
        ) / CAST("cnt" AS DOUBLE PRECISION) - 0.8
      )
    ) AS DOUBLE PRECISION) / 2.0 AS "emd_ordered"
  FROM "cls"
), "cv" AS (
  SELECT
    "c"."nid",
    "c"."k0",
    "c"."cnt",
    "c"."distinct_s",
    "c"."nlogn_s",
    "c"."emd_equal",
    "c"."emd_ordered",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "clsh" AS "c"
  JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
    ON "c"."nid" = "n"."nid"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2
    AND "distinct_s" >= 2
    AND LN(CAST("cnt" AS DOUBLE PRECISION)) - "nlogn_s" / CAST("cnt" AS DOUBLE PRECISION) >= 0.40546510710816436
    AND "emd_equal" <= 0.40000000100000005
    AND "emd_ordered" <= 0.500000001 AS "ok"
  FROM "cv"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  "nid"
FROM "flagged"
GROUP BY
  "nid"

-- name: node_batch_sensitive_values
WITH "w0" AS (
  SELECT
    CAST("q0" AS BIGINT) AS "g0_0",
    CAST((
      ARRAY[0, 0, 1]
    )["q0" + 1] AS BIGINT) AS "g0_1",
    CAST(0 AS BIGINT) AS "g0_2",
    CAST((
      ARRAY[0, 3, 6]
    )["q1" + 1] AS BIGINT) AS "g1_0",
    CAST((
      ARRAY[0, 0, 3]
    )["q1" + 1] AS BIGINT) AS "g1_1",
    CAST(0 AS BIGINT) AS "g1_2",
    "s",
    "cnt"
  FROM "sqlanon_fs0_N"
), "gen" AS (
  SELECT
    "n"."nid",
    CASE "n"."l0" WHEN 0 THEN "r"."g0_0" WHEN 1 THEN "r"."g0_1" ELSE "r"."g0_2" END + CASE "n"."l1" WHEN 0 THEN "r"."g1_0" WHEN 1 THEN "r"."g1_1" ELSE "r"."g1_2" END AS "k0",
    "r"."s",
    "r"."cnt"
  FROM "w0" AS "r"
  CROSS JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
), "gv" AS (
  SELECT
    "nid",
    "k0",
    "s",
    SUM("cnt") AS "cnt"
  FROM "gen"
  GROUP BY
    "nid",
    "k0",
    "s"
), "gsq" AS (
  SELECT
    "nid",
    "k0",
    "x"."s",
    "cnt",
    SUM("cnt") OVER (PARTITION BY "nid", "k0") AS "tot",
    "d"."q"
  FROM "gv" AS "x"
  JOIN "sqlanon_sdom_N" AS "d"
    ON "x"."s" = "d"."s"
), "cls_s" AS (
  SELECT
    "nid",
    "k0",
    SUM("cnt") AS "cnt",
    COUNT(*) AS "distinct_s",
    SUM(CAST("cnt" AS DOUBLE PRECISION) * LN(CAST("cnt" AS DOUBLE PRECISION))) AS "nlogn_s",
    0.5 * (
      SUM(
        ABS(CAST("cnt" AS DOUBLE PRECISION) / CAST("tot" AS DOUBLE PRECISION) - "q") - "q"
      ) + 1
    ) AS "emd_equal"
  FROM "gsq"
  GROUP BY
    "nid",
    "k0"
), "keys" AS (
  SELECT
    "nid",
    "k0",
    SUM("cnt") AS "tot"
  FROM "gv"
  GROUP BY
    "nid",
    "k0"
), "grid" AS (
  SELECT
    "k"."nid",
    "k"."k0",
    "d"."rnk",
    CAST(COALESCE("x"."cnt", 0) AS DOUBLE PRECISION) / CAST("k"."tot" AS DOUBLE PRECISION) - "d"."q" AS "diff"
  FROM "keys" AS "k"
  CROSS JOIN "sqlanon_sdom_N" AS "d"
  LEFT JOIN "gv" AS "x"
    ON "x"."nid" = "k"."nid" AND "x"."k0" = "k"."k0" AND "x"."s" = "d"."s"
), "cum" AS (
  SELECT
    "nid",
    "k0",
    "rnk",
    SUM("diff") OVER (
      PARTITION BY "nid", "k0"
      ORDER BY "rnk"
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS "c"
  FROM "grid"
), "emd" AS (
  SELECT
    "nid",
    "k0",
    CAST(SUM(CASE WHEN "rnk" < 3 THEN ABS("c") ELSE 0.0 END) AS DOUBLE PRECISION) / 2.0 AS "emd_ordered"
  FROM "cum"
  GROUP BY
    "nid",
    "k0"
), "cls" AS (
  SELECT
    "cls_s"."nid",
    "cls_s"."k0",
    "cls_s"."cnt",
    "cls_s"."distinct_s",
    "cls_s"."nlogn_s",
    "cls_s"."emd_equal",
    "emd"."emd_ordered"
  FROM "cls_s"
  JOIN "emd"
    ON "cls_s"."nid" = "emd"."nid" AND "cls_s"."k0" = "emd"."k0"
), "cv" AS (
  SELECT
    "c"."nid",
    "c"."k0",
    "c"."cnt",
    "c"."distinct_s",
    "c"."nlogn_s",
    "c"."emd_equal",
    "c"."emd_ordered",
    "c"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l0" * 3 + "c"."k0" % 3 + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0]
      )["n"."l1" * 3 + CAST(DIV("c"."k0", 3) AS BIGINT) % 3 + 1]
    ) AS "lm_part"
  FROM "cls" AS "c"
  JOIN (VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
    ON "c"."nid" = "n"."nid"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2
    AND "distinct_s" >= 2
    AND LN(CAST("cnt" AS DOUBLE PRECISION)) - "nlogn_s" / CAST("cnt" AS DOUBLE PRECISION) >= 0.40546510710816436
    AND "emd_equal" <= 0.40000000100000005
    AND "emd_ordered" <= 0.500000001 AS "ok"
  FROM "cv"
)
SELECT
  COUNT(*) AS "classes",
  SUM("cnt") AS "rows",
  MIN("cnt") AS "min_class",
  MAX("cnt") AS "max_class",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  SUM(CASE WHEN "ok" THEN "lm_part" ELSE 0.0 END) AS "lm_released",
  "nid"
FROM "flagged"
GROUP BY
  "nid"
