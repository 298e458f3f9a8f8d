-- The visits the warehouse holds so far: the days up to the var `visits_through` (default: all
-- of the seed). `dbt build --vars '{visits_through: 2024-01-01}'`, then 2024-01-02, ... plays the
-- daily partitions arriving.
select *
from {{ ref('visits') }}
where day <= cast('{{ var("visits_through", "2024-01-03") }}' as date)
