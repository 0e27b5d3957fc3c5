#!/usr/bin/env python3
"""Every module a target imports is one it declares in Package.swift.

SwiftPM's `--explicit-target-dependency-import-check error` (which `make test`'s build also uses) flags a target that
imports another of the package's targets it cannot reach at all; one it reaches through a dependency of a dependency
passes there, and then breaks the day that dependency drops it. This check asks for the direct declaration: a target
of this package, or a product of a dependency, imported by any file of a target must be among that target's own
dependencies. Modules of the toolchain (Foundation, Testing, Synchronization, ...) need none.

usage: tools/check-imports.py   (from the project's root; exit status 1 with one line per undeclared import)
"""
import json
import pathlib
import re
import subprocess
import sys

IMPORT = re.compile(
    r"^\s*(?:@testable\s+|@_exported\s+|public\s+|package\s+|internal\s+|private\s+|fileprivate\s+)*"
    r"import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)


def main() -> int:
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True,
                                         capture_output=True, text=True).stdout)
    targets = {target["name"]: target for target in manifest["targets"]}
    products = set()
    for target in manifest["targets"]:
        for dependency in target["dependencies"]:
            if "product" in dependency:
                products.add(dependency["product"][0])
    problems = []
    for name, target in sorted(targets.items()):
        if target["type"] in ("system", "plugin"):
            continue
        declared = set()
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            declared.add(value[0])
        directory = pathlib.Path(target.get("path") or
                                 ("Tests/" if target["type"] == "test" else "Sources/") + name)
        for file in sorted(directory.rglob("*.swift")):
            for number, line in enumerate(file.read_text().splitlines(), start=1):
                match = IMPORT.match(line)
                if not match:
                    continue
                module = match.group(1)
                if module == name or module in declared:
                    continue
                if module in targets or module in products:
                    problems.append(f"{file}:{number}: {name} imports {module} without declaring it in Package.swift")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
