WITH `r` AS (
  SELECT
    `cd`.`c` + `kb0`[`b0`] AS `key`,
    `b`.`cnt`,
    `b`.`cnt` * (
      `lb0`[`b`.`b0`]
    ) AS `rl`
  FROM `sqlanon_ga_base_N` AS `b`
  CROSS JOIN `sqlanon_ga_cand_N` AS `cd`
), `cls` AS (
  SELECT
    `key` % 64 AS `c`,
    `key`,
    SUM(`cnt`) AS `cnt`,
    SUM(`rl`) AS `rl`
  FROM `r`
  GROUP BY
    `key`
), `flagged` AS (
  SELECT
    *,
    `cnt` >= 2 AS `ok`
  FROM `cls`
)
SELECT
  `c`,
  SUM(CASE WHEN `ok` THEN 0 ELSE `cnt` END) AS `suppressed`,
  COUNT(*) AS `classes`,
  SUM(CASE WHEN `ok` THEN 0 ELSE 1 END) AS `bad_classes`,
  MIN(`cnt`) AS `min_class`,
  SUM(CASE WHEN `ok` THEN 0.0 ELSE `rl` END) AS `lm_sup`
FROM `flagged`
GROUP BY
  `c`
ORDER BY
  `c`
