"""The published JSON Schemas (docs/schemas/), for tests that check a real output against them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def _registry() -> Registry:
    resources = [(p.name, Resource.from_contents(json.loads(p.read_text()))) for p in SCHEMAS.glob("*.json")]
    return Registry().with_resources(resources)


def validate(doc: dict, schema: str) -> None:
    registry = _registry()
    jsonschema.Draft202012Validator(registry.contents(schema), registry=registry).validate(doc)
