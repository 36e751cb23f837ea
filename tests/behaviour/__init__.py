"""Behaviour tests: import the fixture engine before and after conversion and compare."""
