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
        "cd"."g0"[CAST(DIV("f"."key", "cd"."s0") AS BIGINT) % "cd"."m0" + 1] + "cd"."g1"[CAST(DIV("f"."key", "cd"."s1") AS BIGINT) % "cd"."m1" + 1]
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
