SELECT
  CASE GROUPING_ID(`q0`, `q1`, `q2`) WHEN 1 THEN 0 WHEN 2 THEN 1 WHEN 4 THEN 2 END AS `p`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 1
    THEN `q0`
    WHEN 2
    THEN `q0`
    WHEN 4
    THEN `q1`
  END AS `a`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 1
    THEN `q1`
    WHEN 2
    THEN `q2`
    WHEN 4
    THEN `q2`
  END AS `b`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q0`, `q1`),
    (`q0`, `q2`),
    (`q1`, `q2`)
  );

SELECT
  CASE GROUPING_ID(`q0`, `q1`, `q2`) WHEN 3 THEN 0 WHEN 5 THEN 1 WHEN 6 THEN 2 END AS `i`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 3
    THEN `q0`
    WHEN 5
    THEN `q1`
    WHEN 6
    THEN `q2`
  END AS `code`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q0`),
    (`q1`),
    (`q2`)
  );

SELECT
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN 0 WHEN 2 THEN 1 END AS `p`,
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN `q2` WHEN 2 THEN `q1` END AS `a`,
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN `q0` WHEN 2 THEN `q2` END AS `b`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q2`, `q0`),
    (`q1`, `q2`)
  )
