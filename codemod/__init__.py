"""Migrate LLM inference engines off ``torch.nn.Parameter`` subclasses."""

from codemod import quiet_matchers

quiet_matchers.install()
