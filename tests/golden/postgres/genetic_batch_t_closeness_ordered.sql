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
), "rs" AS (
  SELECT
    "key",
    "s",
    SUM("cnt") AS "cnt",
    SUM("rl") AS "rl"
  FROM "r"
  GROUP BY
    "key",
    "s"
), "ekeys" AS (
  SELECT
    "key",
    SUM("cnt") AS "tot"
  FROM "rs"
  GROUP BY
    "key"
), "egrid" AS (
  SELECT
    "k"."key",
    "d"."rnk",
    CAST(COALESCE("x"."cnt", 0) AS DOUBLE PRECISION) / CAST("k"."tot" AS DOUBLE PRECISION) - "d"."q" AS "diff"
  FROM "ekeys" AS "k"
  CROSS JOIN "sqlanon_sdom_N" AS "d"
  LEFT JOIN "rs" AS "x"
    ON "x"."key" = "k"."key" AND "x"."s" = "d"."s"
), "ecum" AS (
  SELECT
    "key",
    "rnk",
    SUM("diff") OVER (PARTITION BY "key" ORDER BY "rnk" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS "cm"
  FROM "egrid"
), "emd" AS (
  SELECT
    "key",
    CAST(SUM(CASE WHEN "rnk" < 3 THEN ABS("cm") ELSE 0.0 END) AS DOUBLE PRECISION) / 2.0 AS "emd_ordered"
  FROM "ecum"
  GROUP BY
    "key"
), "cls0" AS (
  SELECT
    "key" % 64 AS "c",
    "key",
    SUM("cnt") AS "cnt",
    SUM("rl") AS "rl"
  FROM "rs"
  GROUP BY
    "key"
), "cls" AS (
  SELECT
    "a"."c",
    "a"."key",
    "a"."cnt",
    "a"."rl",
    "e"."emd_ordered"
  FROM "cls0" AS "a"
  JOIN "emd" AS "e"
    ON "a"."key" = "e"."key"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AND "emd_ordered" <= 0.40000000100000005 AS "ok"
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
