#!/usr/bin/env python3
"""Validates geoworker messages against the JSON Schemas (2020-12) in Schemas/.

Reads lines `KIND<TAB>JSON` from standard input, KIND being `position`, `command`, `event`, `geofence` (a
catalog record), `device-status`, `device-map`, `device-nearby` or `geofences` (the operations port's answers); the schema is
picked by KIND and, for commands and events, by the message's `type`. Checks the schemas themselves and
their `examples` first. Prints one line per invalid message and exits 1 if there is any.

Usage: validate.py SCHEMA_DIR < messages.tsv   (needs `jsonschema` >= 4.18 from PyPI; make setup installs it)
"""
import json
import pathlib
import sys

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource


def load(directory):
    schemas = {}
    for path in sorted(pathlib.Path(directory).glob("*.schema.json")):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        schemas[path.name[: -len(".schema.json")]] = schema
    registry = Registry().with_resources(
        (f"{schema['$id']}", Resource.from_contents(schema)) for schema in schemas.values()
    ).with_resources(
        (name + ".schema.json", Resource.from_contents(schema)) for name, schema in schemas.items()
    )
    return {
        name: Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())
        for name, schema in schemas.items()
    }


def schema_name(kind, message):
    if kind in ("position", "device-status", "device-map", "device-nearby", "geofence", "geofences"):
        return kind
    kind_type = message.get("type") if isinstance(message, dict) else None
    return f"{kind}.{kind_type}"


def main():
    validators = load(sys.argv[1])
    problems = []
    for name, validator in validators.items():
        for example in validator.schema.get("examples", []):
            problems += [f"{name} example: {error.message}" for error in validator.iter_errors(example)]
    count = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        kind, _, text = line.rstrip("\n").partition("\t")
        count += 1
        try:
            message = json.loads(text)
        except json.JSONDecodeError as error:
            problems.append(f"line {number}: not JSON ({error})")
            continue
        name = schema_name(kind, message)
        validator = validators.get(name)
        if validator is None:
            problems.append(f"line {number}: no schema {name} for {text[:120]}")
            continue
        for error in validator.iter_errors(message):
            path = "/".join(str(part) for part in error.absolute_path)
            problems.append(f"line {number} ({name}) at /{path}: {error.message}")
    for problem in problems:
        print(problem)
    print(f"validated {count} messages against {len(validators)} schemas: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
