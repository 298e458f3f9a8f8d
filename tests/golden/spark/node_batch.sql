WITH `w0` AS (
  SELECT
    CAST(ARRAY(0, 1, 2)[`q0`] AS BIGINT) AS `g0_0`,
    CAST(ARRAY(0, 0, 1)[`q0`] AS BIGINT) AS `g0_1`,
    CAST(ARRAY(0, 0, 0)[`q0`] AS BIGINT) AS `g0_2`,
    CAST(ARRAY(0, 3, 6)[`q1`] AS BIGINT) AS `g1_0`,
    CAST(ARRAY(0, 0, 3)[`q1`] AS BIGINT) AS `g1_1`,
    CAST(ARRAY(0, 0, 0)[`q1`] AS BIGINT) AS `g1_2`,
    `cnt`
  FROM `sqlanon_fs0_N`
), `gen` AS (
  SELECT /*+ BROADCAST(`r`) */
    `n`.`nid`,
    CASE `n`.`l0` WHEN 0 THEN `r`.`g0_0` WHEN 1 THEN `r`.`g0_1` ELSE `r`.`g0_2` END + CASE `n`.`l1` WHEN 0 THEN `r`.`g1_0` WHEN 1 THEN `r`.`g1_1` ELSE `r`.`g1_2` END AS `k0`,
    `r`.`cnt`
  FROM `w0` AS `r`
  CROSS JOIN (
    SELECT /*+ REPARTITION(4, `nid`) */
      *
    FROM VALUES
      (0, 0, 0),
      (1, 1, 1),
      (2, 1, 2),
      (3, 2, 1) AS `n`(`nid`, `l0`, `l1`)
  ) AS `n`
), `cls` AS (
  SELECT
    `nid`,
    `k0`,
    SUM(`cnt`) AS `cnt`
  FROM `gen`
  GROUP BY
    `nid`,
    `k0`
), `cv` AS (
  SELECT
    `c`.`nid`,
    `c`.`k0`,
    `c`.`cnt`,
    `c`.`cnt` * (
      ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l0` * 3 + `c`.`k0` % 3] + ARRAY(0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0)[`n`.`l1` * 3 + CAST(`c`.`k0` DIV 3 AS BIGINT) % 3]
    ) AS `lm_part`
  FROM `cls` AS `c`
  JOIN VALUES
    (0, 0, 0),
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 1) AS `n`(`nid`, `l0`, `l1`)
    ON `c`.`nid` = `n`.`nid`
), `flagged` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `cv`
)
SELECT
  COUNT(*) AS `classes`,
  SUM(`cnt`) AS `rows`,
  MIN(`cnt`) AS `min_class`,
  MAX(`cnt`) AS `max_class`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  SUM(CASE WHEN `ok` THEN `lm_part` ELSE 0.0 END) AS `lm_released`,
  `nid`
FROM `flagged`
GROUP BY
  `nid`
