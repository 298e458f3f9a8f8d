SELECT
  `q0`,
  `q1`,
  CAST(SUM(`cnt`) AS BIGINT) AS `n`
FROM `sqlanon_fs0_N`
GROUP BY
  GROUPING SETS (
    (`q0`, `q1`)
  )
