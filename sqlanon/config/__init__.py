"""What a run is told: the typed policy, its checks and loaders, the search options, the JSON Schemas, and the Python API's builders."""
