WITH `c0` AS (
  SELECT
    CAST(`q0` AS BIGINT) + CAST(`q1` AS BIGINT) * 3 AS `k0`,
    SUM(`cnt`) AS `cnt`
  FROM `sqlanon_fs0_N`
  GROUP BY
    `k0`
), `v0` AS (
  SELECT
    `c`.`k0`,
    `c`.`cnt`,
    `c`.`cnt` * (
      ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l0` * 3 + `c`.`k0` % 3] + ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l1` * 3 + CAST(`c`.`k0` DIV 3 AS BIGINT) % 3]
    ) AS `lm_part`
  FROM `c0` AS `c`
  CROSS JOIN VALUES
    (0, 0, 0) AS `n`(`nid`, `l0`, `l1`)
), `f0` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `v0`
), `c1` AS (
  SELECT
    CAST(ARRAY(0, 0, 1)[`q0`] AS BIGINT) + CAST(ARRAY(0, 0, 1)[`q1`] AS BIGINT) * 3 AS `k0`,
    SUM(`cnt`) AS `cnt`
  FROM `sqlanon_fs0_N`
  GROUP BY
    `k0`
), `v1` AS (
  SELECT
    `c`.`k0`,
    `c`.`cnt`,
    `c`.`cnt` * (
      ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l0` * 3 + `c`.`k0` % 3] + ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l1` * 3 + CAST(`c`.`k0` DIV 3 AS BIGINT) % 3]
    ) AS `lm_part`
  FROM `c1` AS `c`
  CROSS JOIN VALUES
    (1, 1, 1) AS `n`(`nid`, `l0`, `l1`)
), `f1` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `v1`
), `c2` AS (
  SELECT
    CAST(ARRAY(0, 0, 1)[`q0`] AS BIGINT) + CAST(ARRAY(0, 0, 0)[`q1`] AS BIGINT) * 3 AS `k0`,
    SUM(`cnt`) AS `cnt`
  FROM `sqlanon_fs0_N`
  GROUP BY
    `k0`
), `v2` AS (
  SELECT
    `c`.`k0`,
    `c`.`cnt`,
    `c`.`cnt` * (
      ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l0` * 3 + `c`.`k0` % 3] + ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l1` * 3 + CAST(`c`.`k0` DIV 3 AS BIGINT) % 3]
    ) AS `lm_part`
  FROM `c2` AS `c`
  CROSS JOIN VALUES
    (2, 1, 2) AS `n`(`nid`, `l0`, `l1`)
), `f2` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `v2`
), `c3` AS (
  SELECT
    CAST(ARRAY(0, 0, 0)[`q0`] AS BIGINT) + CAST(ARRAY(0, 0, 1)[`q1`] AS BIGINT) * 3 AS `k0`,
    SUM(`cnt`) AS `cnt`
  FROM `sqlanon_fs0_N`
  GROUP BY
    `k0`
), `v3` AS (
  SELECT
    `c`.`k0`,
    `c`.`cnt`,
    `c`.`cnt` * (
      ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l0` * 3 + `c`.`k0` % 3] + ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l1` * 3 + CAST(`c`.`k0` DIV 3 AS BIGINT) % 3]
    ) AS `lm_part`
  FROM `c3` AS `c`
  CROSS JOIN VALUES
    (3, 2, 1) AS `n`(`nid`, `l0`, `l1`)
), `f3` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `v3`
)
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  SUM(CASE WHEN `ok` THEN `lm_part` ELSE 0.0 END) AS `lm_released`,
  0 AS `nid`
FROM `f0`
UNION ALL
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  SUM(CASE WHEN `ok` THEN `lm_part` ELSE 0.0 END) AS `lm_released`,
  1 AS `nid`
FROM `f1`
UNION ALL
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  SUM(CASE WHEN `ok` THEN `lm_part` ELSE 0.0 END) AS `lm_released`,
  2 AS `nid`
FROM `f2`
UNION ALL
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  SUM(CASE WHEN `ok` THEN `lm_part` ELSE 0.0 END) AS `lm_released`,
  3 AS `nid`
FROM `f3`
