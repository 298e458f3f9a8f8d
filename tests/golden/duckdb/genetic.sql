-- golden SQL (duckdb): the genetic search's batched fitness (sqlanon/search/genetic/stats.py)
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: genetic_batch_lm
WITH "r" AS (
  SELECT
    "cd"."c" + "kb0"["b0" + 1] AS "key",
    "b"."cnt",
    "b"."cnt" * (
      "lb0"["b"."b0" + 1]
    ) AS "rl"
  FROM "sqlanon_ga_base_N" AS "b"
  CROSS JOIN "sqlanon_ga_cand_N" AS "cd"
), "cls" AS (
  SELECT
    "key" % 64 AS "c",
    "key",
    SUM("cnt") AS "cnt",
    SUM("rl") AS "rl"
  FROM "r"
  GROUP BY
    "key"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
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

-- name: genetic_batch_lm_within
WITH "r" AS (
  SELECT
    "cd"."c" + "kb0"["b0" + 1] + "kb1"["b1" + 1] AS "key",
    "b"."cnt"
  FROM "sqlanon_ga_base_N" AS "b"
  CROSS JOIN "sqlanon_ga_cand_N" AS "cd"
), "cls" AS (
  SELECT
    "key" % 64 AS "c",
    "key",
    SUM("cnt") AS "cnt"
  FROM "r"
  GROUP BY
    "key"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "cls"
), "per0" AS (
  SELECT
    "c",
    SUM(CASE WHEN "ok" THEN 0 ELSE "cnt" END) AS "suppressed",
    COUNT(*) AS "classes",
    SUM(CASE WHEN "ok" THEN 0 ELSE 1 END) AS "bad_classes",
    MIN("cnt") AS "min_class"
  FROM "flagged"
  GROUP BY
    "c"
), "per" AS (
  SELECT
    "a".*,
    "wb"."w"
  FROM "per0" AS "a"
  CROSS JOIN (
    SELECT
      MIN("w") AS "w"
    FROM "sqlanon_ga_cand_N"
  ) AS "wb"
), "bad" AS (
  SELECT
    "f".*
  FROM "flagged" AS "f"
  JOIN "per" AS "p"
    ON "f"."c" = "p"."c"
  WHERE
    NOT "f"."ok" AND "p"."suppressed" <= "p"."w"
), "lm" AS (
  SELECT
    "f"."c",
    SUM(
      "f"."cnt" * (
        "cd"."g0"[CAST("f"."key" // "cd"."s0" AS BIGINT) % "cd"."m0" + 1] + "cd"."g1"[CAST("f"."key" // "cd"."s1" AS BIGINT) % "cd"."m1" + 1]
      )
    ) AS "lm_sup"
  FROM "bad" AS "f"
  CROSS JOIN "sqlanon_ga_cand_N" AS "cd"
  WHERE
    "f"."c" - "cd"."c" = 0
  GROUP BY
    "f"."c"
)
SELECT
  "p"."c",
  "p"."suppressed",
  "p"."classes",
  "p"."bad_classes",
  "p"."min_class",
  CASE WHEN "p"."suppressed" <= "p"."w" THEN COALESCE("l"."lm_sup", 0.0) ELSE NULL END AS "lm_sup"
FROM "per" AS "p"
LEFT JOIN "lm" AS "l"
  ON "p"."c" = "l"."c"
ORDER BY
  "p"."c"

-- name: genetic_batch_t_closeness
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
      SUM(ABS(CAST("cnt" AS DOUBLE) / CAST("tot" AS DOUBLE) - "q") - "q") + 1
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

-- name: genetic_batch_t_closeness_ordered
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
    CAST(COALESCE("x"."cnt", 0) AS DOUBLE) / CAST("k"."tot" AS DOUBLE) - "d"."q" AS "diff"
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
    SUM(CASE WHEN "rnk" < 3 THEN ABS("cm") ELSE 0.0 END) / 2.0 AS "emd_ordered"
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
