#!/usr/bin/env python3
"""Checks geoworker's published contract: Schemas/asyncapi.yaml (AsyncAPI 3.0) and Schemas/openapi.yaml (OpenAPI 3.1).

  check_contract.py documents SCHEMA_DIR
      Both documents are valid (the AsyncAPI 3.0 object model of the `asyncapi3` package, `openapi-spec-validator`),
      every `$ref` in them resolves (inside the document, or to a file of SCHEMA_DIR and a place in it), and every
      `*.schema.json` of SCHEMA_DIR is reached from one of them, directly or through another schema.

  check_contract.py messages SCHEMA_DIR < messages.jsonl
      Each line is a Kafka message as JSON: {"channel": NAME, "key": TEXT|null, "headers": {NAME: TEXT},
      "value": TEXT|null}. It must match one of the messages its channel of asyncapi.yaml lists: its headers
      schema, the Kafka key schema of its bindings, and its payload (parsed as JSON when the message's
      contentType is JSON, else the text itself). Prints one line per message that matches none, and exits 1
      if there is any.

Needs PyYAML, jsonschema >= 4.18, asyncapi3 and openapi-spec-validator (scripts/setup.sh test installs them).
"""
import json
import pathlib
import sys
import warnings

import yaml
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker
from referencing import Registry, Resource

ASYNCAPI = "asyncapi.yaml"
OPENAPI = "openapi.yaml"


def load_yaml(path):
    return yaml.safe_load(path.read_text())


def pointer(document, fragment):
    """The part of `document` at a JSON pointer (`/a/b`), or KeyError."""
    node = document
    for part in [p for p in fragment.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def references(node):
    """Every `$ref` value under `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from references(value)
    elif isinstance(node, list):
        for value in node:
            yield from references(value)


class SchemaFiles:
    """The JSON Schemas of a directory, by file name, and a registry that resolves their references."""

    def __init__(self, directory):
        self.directory = directory
        self.schemas = {}
        for path in sorted(directory.glob("*.schema.json")):
            schema = json.loads(path.read_text())
            Draft202012Validator.check_schema(schema)
            self.schemas[path.name] = schema
        self.registry = Registry().with_resources(
            (schema["$id"], Resource.from_contents(schema)) for schema in self.schemas.values()
        ).with_resources((name, Resource.from_contents(schema)) for name, schema in self.schemas.items())

    def resolve(self, reference, document, origin):
        """Checks that `reference`, made in `origin` (a file name, or the document), points somewhere; returns the
        schema file it names, if any."""
        target, _, fragment = reference.partition("#")
        if target:
            name = pathlib.PurePosixPath(target).name
            if name not in self.schemas:
                raise LookupError(f"{origin}: $ref {reference}: no file {target} in {self.directory}")
            pointer(self.schemas[name], fragment)
            return name
        try:
            pointer(document, fragment)
        except (KeyError, IndexError, ValueError):
            raise LookupError(f"{origin}: $ref {reference} points nowhere") from None
        return None

    def validator(self, name):
        return Draft202012Validator(self.schemas[name], registry=self.registry, format_checker=FormatChecker())


def check_documents(directory):
    files = SchemaFiles(directory)
    problems = []
    reached = set()
    for document_name in (ASYNCAPI, OPENAPI):
        path = directory / document_name
        if not path.exists():
            problems.append(f"{document_name}: missing")
            continue
        document = load_yaml(path)
        try:
            validate_structure(document_name, document, path)
        except Exception as error:  # the validators' own error types
            message = getattr(error, "message", None) or str(error)
            problems.append(f"{document_name}: not valid: {message[:1000]}")
        for reference in references(document):
            try:
                name = files.resolve(reference, document, document_name)
            except (LookupError, KeyError, IndexError) as error:
                problems.append(str(error))
                continue
            if name:
                reached.add(name)
    # Schemas reached through other schemas (common.schema.json through the events).
    pending = list(reached)
    while pending:
        name = pending.pop()
        for reference in references(files.schemas[name]):
            try:
                target = files.resolve(reference, files.schemas[name], name)
            except (LookupError, KeyError, IndexError) as error:
                problems.append(str(error))
                continue
            if target and target not in reached:
                reached.add(target)
                pending.append(target)
    for name in sorted(set(files.schemas) - reached):
        problems.append(f"{name}: referenced by neither {ASYNCAPI} nor {OPENAPI}")
    for problem in problems:
        print(problem)
    print(f"checked {ASYNCAPI} and {OPENAPI} against {len(files.schemas)} schema files: {len(problems)} problems")
    return 1 if problems else 0


def validate_structure(name, document, path):
    if name == ASYNCAPI:
        if document.get("asyncapi") != "3.0.0":
            raise ValueError(f"asyncapi is {document.get('asyncapi')!r}, not 3.0.0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from asyncapi3 import AsyncAPI3

            AsyncAPI3.model_validate(document)
    else:
        from openapi_spec_validator import validate
        from openapi_spec_validator.readers import read_from_filename

        spec, base_uri = read_from_filename(str(path))
        if not str(spec.get("openapi", "")).startswith("3.1"):
            raise ValueError(f"openapi is {spec.get('openapi')!r}, not 3.1.x")
        validate(spec, base_uri=base_uri)


class Channels:
    """The AsyncAPI document's channels, each with the messages it lists, ready to validate."""

    def __init__(self, directory):
        self.files = SchemaFiles(directory)
        self.document = load_yaml(directory / ASYNCAPI)

    def follow(self, node):
        while isinstance(node, dict) and "$ref" in node:
            node = pointer(self.document, node["$ref"].partition("#")[2])
        return node

    def messages(self, channel):
        node = self.document["channels"].get(channel)
        if node is None:
            return None
        return {name: self.follow(message) for name, message in self.follow(node).get("messages", {}).items()}

    def schema_problems(self, schema, instance):
        """Problems of `instance` against an AsyncAPI schema object, a multi-format schema or a file $ref."""
        schema = self.follow(schema) if not str(schema.get("$ref", "#")).startswith(".") else schema
        if "schemaFormat" in schema:
            schema = schema["schema"]
        reference = schema.get("$ref", "")
        if reference and not reference.startswith("#"):
            validator = self.files.validator(pathlib.PurePosixPath(reference.partition("#")[0]).name)
        else:
            validator = Draft7Validator(schema)
        return [
            f"/{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
            for error in validator.iter_errors(instance)
        ]

    def key_schema(self, message):
        bindings = dict(message.get("bindings", {}))
        for trait in message.get("traits", []):
            bindings = {**self.follow(trait).get("bindings", {}), **bindings}
        key = bindings.get("kafka", {}).get("key")
        return self.follow(key) if key else None

    def problems(self, message, record):
        """Why `record` is not `message`, or nothing."""
        found = []
        content_type = message.get("contentType", self.document.get("defaultContentType", ""))
        value = record.get("value")
        if "json" in content_type:
            try:
                value = json.loads(value)
            except (TypeError, json.JSONDecodeError) as error:
                return [f"payload is not JSON ({error})"]
        if "payload" in message:
            found += [f"payload {p}" for p in self.schema_problems(message["payload"], value)]
        if "headers" in message:
            found += [f"headers {p}" for p in self.schema_problems(message["headers"], record.get("headers", {}))]
        key_schema = self.key_schema(message)
        if key_schema is not None and record.get("key") is not None:
            found += [f"key {p}" for p in self.schema_problems(key_schema, record["key"])]
        return found


def check_messages(directory, lines):
    channels = Channels(directory)
    problems = []
    count = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        count += 1
        record = json.loads(line)
        messages = channels.messages(record["channel"])
        if not messages:
            problems.append(f"line {number}: no channel {record['channel']} (or it lists no message)")
            continue
        results = {name: channels.problems(message, record) for name, message in messages.items()}
        if any(not found for found in results.values()):
            continue
        # The message its `type` names (events and commands), else the channel's only one, says what is wrong.
        try:
            named = json.loads(record.get("value") or "null")
        except json.JSONDecodeError:
            named = None
        kind = named.get("type") if isinstance(named, dict) else None
        closest = next((n for n, m in messages.items() if m.get("name") == kind), None)
        shown = {closest: results[closest]} if closest else results
        for name, found in shown.items():
            problems.append(f"line {number} ({record['channel']}, as {name}): {'; '.join(found[:5])}")
    for problem in problems:
        print(problem)
    print(f"validated {count} messages against {ASYNCAPI}: {len(problems)} problems")
    return 1 if problems else 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("documents", "messages"):
        print(__doc__, file=sys.stderr)
        return 2
    directory = pathlib.Path(sys.argv[2])
    if sys.argv[1] == "documents":
        return check_documents(directory)
    return check_messages(directory, sys.stdin.read().splitlines())


if __name__ == "__main__":
    sys.exit(main())
