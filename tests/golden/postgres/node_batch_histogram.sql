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
