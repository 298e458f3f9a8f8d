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
    SUM(`cnt`) AS `cnt`
  FROM `gen`
  GROUP BY
    `q0`,
    `q1`
), `keys` AS (
  SELECT
    `q0`,
    `q1`,
    SUM(`cnt`) AS `tot`
  FROM `gen`
  GROUP BY
    `q0`,
    `q1`
), `grid` AS (
  SELECT
    `k`.`q0`,
    `k`.`q1`,
    `d`.`rnk`,
    CAST(COALESCE(`x`.`cnt`, 0) AS DOUBLE) / CAST(`k`.`tot` AS DOUBLE) - `d`.`q` AS `diff`
  FROM `keys` AS `k`
  CROSS JOIN `sqlanon_sdom_N` AS `d`
  LEFT JOIN `gen` AS `x`
    ON `x`.`q0` = `k`.`q0` AND `x`.`q1` = `k`.`q1` AND `x`.`s` = `d`.`s`
), `cum` AS (
  SELECT
    `q0`,
    `q1`,
    `rnk`,
    SUM(`diff`) OVER (
      PARTITION BY `q0`, `q1`
      ORDER BY `rnk` NULLS LAST
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS `c`
  FROM `grid`
), `emd` AS (
  SELECT
    `q0`,
    `q1`,
    SUM(CASE WHEN `rnk` < 3 THEN ABS(`c`) ELSE 0.0 END) / 2.0 AS `emd_ordered`
  FROM `cum`
  GROUP BY
    `q0`,
    `q1`
), `cls` AS (
  SELECT
    `cls_s`.`q0`,
    `cls_s`.`q1`,
    `cls_s`.`cnt`,
    `emd`.`emd_ordered`
  FROM `cls_s`
  INNER JOIN `emd`
    ON `cls_s`.`q0` = `emd`.`q0` AND `cls_s`.`q1` = `emd`.`q1`
), `flagged` AS (
  SELECT
    *,
    `emd_ordered` <= 0.300000001 AS `ok`
  FROM `cls`
)
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`
FROM `flagged`
