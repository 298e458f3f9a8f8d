WITH "meet1" AS (
  SELECT
    "q0",
    "q1",
    SUM("cnt") AS "cnt"
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
), "gen" AS (
  SELECT
    "n"."nid",
    (
      ARRAY[0, 1, 2, 0, 0, 1, 0, 0, 0]
    )["n"."l0" * 3 + "r"."q0" + 1] AS "q0",
    (
      ARRAY[0, 1, 2, 0, 0, 1, 0, 0, 0]
    )["n"."l1" * 3 + "r"."q1" + 1] AS "q1",
    "r"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0]
      )["n"."l0" * 3 + "r"."q0" + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0]
      )["n"."l1" * 3 + "r"."q1" + 1]
    ) AS "lm_part",
    "r"."cnt"
  FROM "sqlanon_fs0_N" AS "r"
  CROSS JOIN (VALUES
    (0, 0, 0)) AS "n"("nid", "l0", "l1")
  UNION ALL
  SELECT
    "n"."nid",
    (
      ARRAY[0, 0, 0, 0, 1, 0, 0, 0, 0]
    )["n"."l0" * 3 + "r"."q0" + 1] AS "q0",
    (
      ARRAY[0, 0, 0, 0, 1, 0, 0, 0, 0]
    )["n"."l1" * 3 + "r"."q1" + 1] AS "q1",
    "r"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 0.0]
      )["n"."l0" * 3 + "r"."q0" + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 0.0]
      )["n"."l1" * 3 + "r"."q1" + 1]
    ) AS "lm_part",
    "r"."cnt"
  FROM "meet1" AS "r"
  CROSS JOIN (VALUES
    (1, 1, 1),
    (2, 1, 2)) AS "n"("nid", "l0", "l1")
  UNION ALL
  SELECT
    "n"."nid",
    (
      ARRAY[0, 1, 2, 0, 0, 1, 0, 0, 0]
    )["n"."l0" * 3 + "r"."q0" + 1] AS "q0",
    (
      ARRAY[0, 1, 2, 0, 0, 1, 0, 0, 0]
    )["n"."l1" * 3 + "r"."q1" + 1] AS "q1",
    "r"."cnt" * (
      (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0]
      )["n"."l0" * 3 + "r"."q0" + 1] + (
        ARRAY[0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 1.0]
      )["n"."l1" * 3 + "r"."q1" + 1]
    ) AS "lm_part",
    "r"."cnt"
  FROM "sqlanon_fs0_N" AS "r"
  CROSS JOIN (VALUES
    (3, 2, 1)) AS "n"("nid", "l0", "l1")
), "cls" AS (
  SELECT
    "nid",
    "q0",
    "q1",
    SUM("cnt") AS "cnt",
    SUM("lm_part") AS "lm_part"
  FROM "gen"
  GROUP BY
    "nid",
    "q0",
    "q1"
), "flagged" AS (
  SELECT
    *,
    "cnt" >= 2 AS "ok"
  FROM "cls"
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
