"""vulture's allow-list (tests/house/test_dead_code.py): names vulture cannot see used, each group
with why. A dead function is deleted, not added here."""
# ruff: noqa


# pydantic: fields, model_config and validators are read by pydantic (the policy, the search options, the report's schema)
model_config  # unused variable (sqlanon/config/policy.py:60)
genetic  # unused variable (sqlanon/search/registry.py:38): AutoOptions' field, read as search_options['genetic'] by choose.auto_genetic
stall  # unused variable (sqlanon/search/lightning/spec.py:19): LightningOptions' field, read as opts['stall'] by lightning.planner.Lightning.stalled
level_mutation  # unused variable (sqlanon/search/genetic/spec.py:28): GeneticOptions' field, read as opts['level_mutation'] by genetic.planner.GA.level_mutate
model_config  # unused variable (sqlanon/config/policy.py:218)
_._nest  # unused method (sqlanon/config/policy.py:310)
model_config  # unused variable (sqlanon/report/model.py:17)
min_class_size  # unused variable (sqlanon/report/model.py:28)
min_distinct_sensitive  # unused variable (sqlanon/report/model.py:30)
distinct_per_level  # unused variable (sqlanon/report/model.py:38)
model_config  # unused variable (sqlanon/report/model.py:50)
timings  # unused variable (sqlanon/report/model.py:63)
cpu_timings  # unused variable (sqlanon/report/model.py:64)
suppression_budget  # unused variable (sqlanon/report/model.py:68)
quasi_identifiers  # unused variable (sqlanon/report/model.py:70)
null_suppressed_rows  # unused variable (sqlanon/report/model.py:74)
validate_report  # unused function (sqlanon/report/model.py:80)
model_config  # unused variable (sqlanon/search/bottom_up/spec.py:19)
numeric_fanout  # unused variable (sqlanon/search/bottom_up/spec.py:21)
pruning  # unused variable (sqlanon/search/bottom_up/spec.py:22)
model_config  # unused variable (sqlanon/search/genetic/spec.py:22)
mutation_rate  # unused variable (sqlanon/search/genetic/spec.py:27)
selection_bias  # unused variable (sqlanon/search/genetic/spec.py:29)
crossover  # unused variable (sqlanon/search/genetic/spec.py:30)
seed_lattice  # unused variable (sqlanon/search/genetic/spec.py:34)
cost_matrix  # unused variable (sqlanon/search/genetic/spec.py:37)
cost_suppressed  # unused variable (sqlanon/search/genetic/spec.py:38)
regression_target  # unused variable (sqlanon/search/genetic/spec.py:39)
model_config  # unused variable (sqlanon/search/lattice/spec.py:34)
model_config  # unused variable (sqlanon/search/lattice/spec.py:46)
model_config  # unused variable (sqlanon/search/lattice/spec.py:54)
model_config  # unused variable (sqlanon/search/lightning/spec.py:15)
model_config  # unused variable (sqlanon/search/options.py:50)
model_config  # unused variable (sqlanon/search/registry.py:33)
model_config  # unused variable (sqlanon/search/top_down/spec.py:18)
sensitive_values  # unused variable (sqlanon/search/top_down/spec.py:24)

# typer: commands are registered by decorators, and an option's parameter is read through the command's locals() (cli/flags.py)
_main  # unused function (sqlanon/cli/app.py:92)
drop_column  # unused variable (sqlanon/cli/app.py:120)
keep_column  # unused variable (sqlanon/cli/app.py:121)
sensitive_values  # unused variable (sqlanon/cli/app.py:134)
mutation_rate  # unused variable (sqlanon/cli/app.py:139)
drop_column  # unused variable (sqlanon/cli/app.py:372)
keep_column  # unused variable (sqlanon/cli/app.py:374)
schema_command  # unused function (sqlanon/cli/app.py:444)
hierarchy_show  # unused function (sqlanon/cli/app.py:468)
hierarchy_import  # unused function (sqlanon/cli/app.py:495)
dbt_path  # unused function (sqlanon/cli/dbt.py:14)
flag_names  # unused function (sqlanon/cli/flags.py:131)

# the public Python API: read by users, not by the package (Release's methods and figures, lazy names, dbt's entry point)
__getattr__  # unused function (sqlanon/__init__.py:44)
anonymize_model  # unused function (sqlanon/dbt/__init__.py:54)
min_class_size  # unused variable (sqlanon/release/result.py:72)
min_distinct_sensitive  # unused variable (sqlanon/release/result.py:74)
suppression_budget  # unused variable (sqlanon/release/result.py:108)
_.quasi_identifiers  # unused property (sqlanon/release/result.py:134)
timings  # unused variable (sqlanon/release/result.py:143)
cpu_timings  # unused variable (sqlanon/release/result.py:144)
_._repr_html_  # unused method (sqlanon/release/result.py:173)
_.report_html  # unused method (sqlanon/release/result.py:177)
_.save_report  # unused method (sqlanon/release/result.py:181)
_.to_pandas  # unused method (sqlanon/release/result.py:225)
_.to_polars  # unused method (sqlanon/release/result.py:230)
__getattr__  # unused function (sqlanon/run/api.py:673)

# named by a 'module:function' string (a search spec's preflight)
built_preflight  # unused function (sqlanon/search/lattice/run.py:45)
optimal_preflight  # unused function (sqlanon/search/lattice/run.py:50)

# used by the tests only: Python twins and brute-force oracles the tests compare the SQL and the
# kernels with (DESIGN.md: a model's Python twin, for oracles), and small helpers they check with
_.probabilities  # unused method (sqlanon/generation/generator.py:64)
expected_anonymity  # unused function (sqlanon/generation/generator.py:245)
_.as_dict  # unused method (sqlanon/generation/itemsets.py:171)
level_query  # unused function (sqlanon/generation/itemsets.py:175)
accepted  # unused variable (sqlanon/generation/krimp.py:133)
encoded_size_bruteforce  # unused function (sqlanon/generation/krimp.py:408)
labelled  # unused function (sqlanon/generation/scores.py:82)
pattern_comparison  # unused function (sqlanon/generation/scores.py:89)
date_parts  # unused function (sqlanon/hierarchy/builders.py:33)
_.without_null_leaf  # unused method (sqlanon/hierarchy/model.py:118)
max_class  # unused variable (sqlanon/privacy/needs.py:144)
anonymity_on_rows  # unused function (sqlanon/privacy/xy.py:116)
linkability_on_rows  # unused function (sqlanon/privacy/xy.py:124)
_.anonymity_vids  # unused method (sqlanon/search/bottom_up/stats.py:327)
_.segments  # unused method (sqlanon/search/bottom_up/stats.py:337)
_.bits_from_transformation  # unused method (sqlanon/search/genetic/cut.py:599)
records_match  # unused function (sqlanon/search/top_down/join.py:177)
anonymity_scores  # unused function (sqlanon/generation/scores.py:66): the NAS as one SQL statement, the oracle of anonymity_levels
measure_table  # unused function (sqlanon/risk/measure.py:150): the risk figures by SQL, the oracle of measure_counts

# read by bench/ (the genetic search's statement count, the population's rows) or kept for a golden SQL case
_.batches  # unused attribute (sqlanon/search/genetic/stats.py:110)
_.batches  # unused attribute (sqlanon/search/genetic/stats.py:684)
_.batches  # unused attribute (sqlanon/search/genetic/stats.py:692)
_.pop_rows  # unused attribute (sqlanon/stats/core.py:141)
_.pop_rows  # unused attribute (sqlanon/stats/models.py:209)
pair_counts_query  # unused function (sqlanon/stats/marginals.py:70)
LAZY  # the kernels the load leaves to their first call: read by tests/stats/test_local_eval.py (sqlanon/stats/local/__init__.py)

# the generator as one array (the pipeline draws generate_blocks block by block; tests, bench/generation.py and the Python API use it)
generate  # unused function (sqlanon/generation/generator.py:80)
elite  # unused variable (sqlanon/search/lattice_genetic/spec.py): LatticeGeneticOptions' field, read as opts['elite'] by lattice_genetic.planner
production  # unused variable (sqlanon/search/lattice_genetic/spec.py): read as opts['production'] by LatticeGenetic.parents
mutation  # unused variable (sqlanon/search/lattice_genetic/spec.py): read as opts['mutation'] by LatticeGenetic.mutant
immigration  # unused variable (sqlanon/search/lattice_genetic/spec.py): read as opts['immigration'] by LatticeGenetic.immigrate
immigration_interval  # unused variable (sqlanon/search/lattice_genetic/spec.py): read as opts['immigration_interval'] by LatticeGenetic.run
