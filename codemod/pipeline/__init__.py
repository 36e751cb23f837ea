"""The engine's stages, in the order ``api.run`` chains them: read (``reading``), index
(``indexing``), plan with the use checks (``plan_rounds``), transform and verify each
file (``conversion``, ``workers``); every stage fills or returns values
(``results.RunResult``), none writes or prints."""
