"""The engine's stages, in the order ``api.run`` chains them: read (``reading``), index
(``indexing``), classify uses and plan (``plan_rounds``), transform and verify each file
(``conversion``, converted by ``workers``), result (``outcomes``). Every stage fills or
returns values (``results.RunResult``); none writes or prints."""
