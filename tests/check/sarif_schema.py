"""The part of the SARIF 2.1.0 schema that ``codemod check --format sarif`` uses, by hand.

Written from the OASIS SARIF 2.1.0 specification (sections 3.13 sarifLog, 3.14 run,
3.18 tool, 3.19 toolComponent, 3.20 invocation, 3.27 result, 3.28 location, 3.29
physicalLocation, 3.30 region, 3.4 artifactLocation, 3.11 message, 3.49
reportingDescriptor, 3.50 reportingConfiguration, 3.58 notification), with the same
required properties, enums, minimums and ``additionalProperties: false`` as the official
schema for every object the reporter writes. The official schema itself is not vendored;
``test_sarif_validates_against_the_official_schema`` uses it when ``SARIF_SCHEMA`` names a
local copy.
"""

from __future__ import annotations

from typing import Any


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False,
                              "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


_REF = "#/definitions/"
_BAG = {"type": "object"}  # propertyBag: any key/value pairs
_LEVEL = {"enum": ["none", "note", "warning", "error"]}

SARIF_SUBSET_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    **_object(
        {
            "$schema": {"type": "string"},
            "version": {"enum": ["2.1.0"]},
            "runs": {"type": "array", "items": {"$ref": _REF + "run"}},
            "properties": _BAG,
        },
        ("version", "runs"),
    ),
    "definitions": {
        "run": _object(
            {
                "tool": {"$ref": _REF + "tool"},
                "invocations": {"type": "array", "items": {"$ref": _REF + "invocation"}},
                "results": {"type": "array", "items": {"$ref": _REF + "result"}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "properties": _BAG,
            },
            ("tool",),
        ),
        "tool": _object({"driver": {"$ref": _REF + "toolComponent"}, "properties": _BAG},
                        ("driver",)),
        "toolComponent": _object(
            {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "informationUri": {"type": "string"},
                "rules": {"type": "array", "uniqueItems": True,
                          "items": {"$ref": _REF + "reportingDescriptor"}},
                "properties": _BAG,
            },
            ("name",),
        ),
        "reportingDescriptor": _object(
            {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "shortDescription": {"$ref": _REF + "multiformatMessageString"},
                "fullDescription": {"$ref": _REF + "multiformatMessageString"},
                "help": {"$ref": _REF + "multiformatMessageString"},
                "helpUri": {"type": "string"},
                "defaultConfiguration": {"$ref": _REF + "reportingConfiguration"},
                "properties": _BAG,
            },
            ("id",),
        ),
        "reportingConfiguration": _object(
            {"enabled": {"type": "boolean"}, "level": _LEVEL, "rank": {"type": "number"},
             "properties": _BAG},
        ),
        "multiformatMessageString": _object(
            {"text": {"type": "string"}, "markdown": {"type": "string"}, "properties": _BAG},
            ("text",),
        ),
        "message": {
            **_object({"text": {"type": "string"}, "markdown": {"type": "string"},
                       "id": {"type": "string"}, "arguments": {"type": "array"},
                       "properties": _BAG}),
            "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
        },
        "invocation": _object(
            {
                "executionSuccessful": {"type": "boolean"},
                "toolExecutionNotifications": {"type": "array",
                                               "items": {"$ref": _REF + "notification"}},
                "properties": _BAG,
            },
            ("executionSuccessful",),
        ),
        "notification": _object(
            {"message": {"$ref": _REF + "message"}, "level": _LEVEL, "properties": _BAG},
            ("message",),
        ),
        "result": _object(
            {
                "ruleId": {"type": "string"},
                "ruleIndex": {"type": "integer", "minimum": -1},
                "level": _LEVEL,
                "message": {"$ref": _REF + "message"},
                "locations": {"type": "array", "items": {"$ref": _REF + "location"}},
                "properties": _BAG,
            },
            ("message",),
        ),
        "location": _object({"physicalLocation": {"$ref": _REF + "physicalLocation"},
                             "properties": _BAG}),
        "physicalLocation": {
            **_object({"artifactLocation": {"$ref": _REF + "artifactLocation"},
                       "region": {"$ref": _REF + "region"}, "properties": _BAG}),
            "anyOf": [{"required": ["artifactLocation"]}],
        },
        "artifactLocation": _object({"uri": {"type": "string"}, "uriBaseId": {"type": "string"},
                                     "index": {"type": "integer", "minimum": -1},
                                     "properties": _BAG}),
        "region": _object(
            {
                "startLine": {"type": "integer", "minimum": 1},
                "startColumn": {"type": "integer", "minimum": 1},
                "endLine": {"type": "integer", "minimum": 1},
                "endColumn": {"type": "integer", "minimum": 1},
                "properties": _BAG,
            },
        ),
    },
}
