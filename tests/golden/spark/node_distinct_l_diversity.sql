WITH `gen` AS (
  SELECT
    `q0`,
    `q1`,
    `s`,
    SUM(`cnt`) AS `cnt`
  FROM (
    SELECT
      ARRAY(0, 0, 1)[`q0`] AS `q0`,
      ARRAY(0, 0, 1)[`q1`] AS `q1`,
      `s`,
      `cnt`
    FROM `sqlanon_fs0_N`
  ) AS `r`
  GROUP BY
    `q0`,
    `q1`,
    `s`
), `cls_s` AS (
  SELECT
    `q0`,
    `q1`,
    SUM(`cnt`) AS `cnt`,
    COUNT(*) AS `distinct_s`
  FROM `gen`
  GROUP BY
    `q0`,
    `q1`
), `flagged` AS (
  SELECT
    *,
    `cnt` >= 2 AND `distinct_s` >= 2 AS `ok`
  FROM `cls_s`
)
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`
FROM `flagged`
