CACHE TABLE `sqlanon_td_base_N` AS
SELECT
  COALESCE(`h0`.`code`, -1) AS `q0`,
  COALESCE(`h1`.`code`, -1) AS `q1`,
  CAST(`src`.`id` AS STRING) AS `yv`,
  CAST(`src`.`salary` AS STRING) AS `cls`,
  COUNT(*) AS `cnt`
FROM `source` AS `src`
LEFT JOIN `sqlanon_h0_N` AS `h0`
  ON `h0`.`level_0` = CAST(`src`.`age` AS STRING)
LEFT JOIN `sqlanon_h1_N` AS `h1`
  ON `h1`.`level_0` = CAST(`src`.`zip` AS STRING)
GROUP BY
  1,
  2,
  3,
  4
