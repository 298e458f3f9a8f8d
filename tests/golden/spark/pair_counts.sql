SELECT
  0 AS `p`,
  `q0` AS `a`,
  `q1` AS `b`,
  SUM(`cnt`) AS `n`
FROM `sqlanon_fs0_N`
GROUP BY
  `q0`,
  `q1`
