"""One module per verb, no HTTP: each handler reads as a recipe (scope, options,
body, admit, store, respond), after apiserver ``pkg/endpoints/handlers``."""
