"""``codemod verify ORIGINAL CONVERTED``: prove on the user's own tree that converted
parameters behave as the classes they replace.

The package finds the converted families (``families``), imports their modules from both
trees side by side with the rest of the engine stubbed (``importer``, ``stubs``), builds
every class from arguments harvested at the tree's own construction sites or synthesized
from its ``__init__`` (``sites``, ``arguments``), runs every public method at every
simulated tensor-parallel position and compares the two trees (``cases``, ``compare``).
The result is plain data (``model``), rendered as a table or JSON (``render``).

Only ``codemod verify`` and ``apply --verify`` import this package's torch-using modules;
``codemod apply`` and ``check`` never import torch.
"""

from codemod.verify.model import ClassResult, Difference, ImportProblem, VerifyResult

__all__ = ["ClassResult", "Difference", "ImportProblem", "VerifyResult"]
