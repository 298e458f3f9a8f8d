WITH "r" AS (
  SELECT
    "cd"."c" + "kb0"["b0" + 1] AS "key",
    "b"."cnt",
    "b"."cnt" * (
      "lb0"["b"."b0" + 1]
    ) AS "rl",
    "b"."s"
  FROM "sqlanon_ga_base_N" AS "b"
  CROSS JOIN "sqlanon_ga_cand_N" AS "cd"
), "rs0" AS (
  SELECT
    "key",
    "s",
    SUM("cnt") AS "cnt",
    SUM("rl") AS "rl"
  FROM "r"
  GROUP BY
    "key",
    "s"
), "rs" AS (
  SELECT
    "x"."key",
    "x"."s",
    "x"."cnt",
    "x"."rl",
    "x"."tot",
    "d"."q"
  FROM (
    SELECT
      *,
      SUM("cnt") OVER (PARTITION BY "key") AS "tot"
    FROM "rs0"
  ) AS "x"
  JOIN "sqlanon_sdom_N" AS "d"
    ON "x"."s" = "d"."s"
), "cls" AS (
  SELECT
    "key" % 64 AS "c",
    "key",
    SUM("cnt") AS "cnt",
    SUM("rl") AS "rl",
    0.5 * (
      SUM(
        ABS(CAST("cnt" AS DOUBLE PRECISION) / CAST("tot" AS DOUBLE PRECISION) - "q") - "q"
      ) + 1
    ) AS "emd_equal"
  FROM "rs"
  GROUP BY
    "key"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AND "emd_equal" <= 0.40000000100000005 AS "ok"
  FROM "cls"
)
SELECT
  "c",
  SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
  COUNT(*) AS "classes",
  SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
  MIN("cnt") AS "min_class",
  SUM(CASE WHEN "ok" THEN 0.0 ELSE "rl" END) AS "lm_sup"
FROM "flagged"
GROUP BY
  "c"
ORDER BY
  "c"
