SELECT
  0 AS "attr",
  2 AS "parent",
  (
    (
      CASE
        WHEN SUM("cnt") > 0
        THEN CAST(SUM("cnt") AS DOUBLE) * LN(CAST(SUM("cnt") AS DOUBLE))
        ELSE 0.0
      END - (
        CASE
          WHEN SUM("y0") > 0
          THEN CAST(SUM("y0") AS DOUBLE) * LN(CAST(SUM("y0") AS DOUBLE))
          ELSE 0.0
        END + CASE
          WHEN SUM("y1") > 0
          THEN CAST(SUM("y1") AS DOUBLE) * LN(CAST(SUM("y1") AS DOUBLE))
          ELSE 0.0
        END
      )
    ) - (
      SUM(
        CASE
          WHEN "cnt" > 0
          THEN CAST("cnt" AS DOUBLE) * LN(CAST("cnt" AS DOUBLE))
          ELSE 0.0
        END
      ) - (
        SUM(
          CASE WHEN "y0" > 0 THEN CAST("y0" AS DOUBLE) * LN(CAST("y0" AS DOUBLE)) ELSE 0.0 END
        ) + SUM(
          CASE WHEN "y1" > 0 THEN CAST("y1" AS DOUBLE) * LN(CAST("y1" AS DOUBLE)) ELSE 0.0 END
        )
      )
    )
  ) / (
    CAST(SUM("cnt") AS DOUBLE) * 0.6931471805599453
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
  (
    (
      CASE
        WHEN SUM("cnt") > 0
        THEN CAST(SUM("cnt") AS DOUBLE) * LN(CAST(SUM("cnt") AS DOUBLE))
        ELSE 0.0
      END - (
        CASE
          WHEN SUM("y0") > 0
          THEN CAST(SUM("y0") AS DOUBLE) * LN(CAST(SUM("y0") AS DOUBLE))
          ELSE 0.0
        END + CASE
          WHEN SUM("y1") > 0
          THEN CAST(SUM("y1") AS DOUBLE) * LN(CAST(SUM("y1") AS DOUBLE))
          ELSE 0.0
        END
      )
    ) - (
      SUM(
        CASE
          WHEN "cnt" > 0
          THEN CAST("cnt" AS DOUBLE) * LN(CAST("cnt" AS DOUBLE))
          ELSE 0.0
        END
      ) - (
        SUM(
          CASE WHEN "y0" > 0 THEN CAST("y0" AS DOUBLE) * LN(CAST("y0" AS DOUBLE)) ELSE 0.0 END
        ) + SUM(
          CASE WHEN "y1" > 0 THEN CAST("y1" AS DOUBLE) * LN(CAST("y1" AS DOUBLE)) ELSE 0.0 END
        )
      )
    )
  ) / (
    CAST(SUM("cnt") AS DOUBLE) * 0.6931471805599453
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
