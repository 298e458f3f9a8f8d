CACHE TABLE `sqlanon_td_prel0_N` AS
SELECT
  COALESCE(`d0`.`id`, -1) AS `j0`,
  CAST(`src`.`sex` AS STRING) AS `x0`,
  CAST(`src`.`disease` AS STRING) AS `yv`,
  COUNT(*) AS `cnt`,
  SUM(CASE WHEN CAST(`src`.`disease` AS STRING) = 'hiv' THEN 1 ELSE 0 END) AS `s0`
FROM `source` AS `src`
LEFT JOIN `sqlanon_td_dict0c0_N` AS `d0`
  ON `d0`.`label` = CAST(`src`.`zip` AS STRING)
GROUP BY
  1,
  2,
  3;

CACHE TABLE `sqlanon_td_part0_N` AS
SELECT
  `j0`,
  `x0`,
  SUM(`cnt`) AS `n`,
  COUNT(*) AS `a`,
  SUM(`s0`) AS `s0`
FROM `sqlanon_td_prel0_N`
GROUP BY
  `j0`,
  `x0`;

CACHE TABLE `sqlanon_td_key0_N` AS
SELECT
  `j0`,
  SUM(`n`) AS `n`,
  MIN(`a`) AS `amin`,
  MAX(CAST(`s0` AS DOUBLE) / CAST(`n` AS DOUBLE)) AS `sr0`
FROM `sqlanon_td_part0_N`
GROUP BY
  `j0`
