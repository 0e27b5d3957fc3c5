#!/usr/bin/env bash
# A real Nominatim (OpenStreetMap's geocoder) on this machine, for the street-address tests: Debian's PostgreSQL,
# PostGIS and osm2pgsql, PyPI's nominatim-db and nominatim-api (pinned), and Monaco's OpenStreetMap extract (the
# test data of PyPI's osrm-bindings source distribution, checked by its SHA-256). Everything lives in
# $NOMINATIM_DIR (default .build-nominatim/ in the project), so that the database is imported once and kept between
# runs of the tests.
#
#   scripts/nominatim.sh setup         install what is missing and import Monaco once (a minute or two the first time)
#   scripts/nominatim.sh start PORT    start PostgreSQL and Nominatim's API on 127.0.0.1:PORT; waits until it answers
#   scripts/nominatim.sh serve PORT    start PostgreSQL, then become Nominatim's API on 127.0.0.1:PORT (the tests own
#                                      this process: a SIGTERM stops the API, the database stays up)
#   scripts/nominatim.sh stop          stop the API servers started with start, and PostgreSQL
#
# PostgreSQL refuses to run as root: as root, the database server runs as Debian's `postgres` user (Nominatim itself,
# a client of it, runs as whoever calls this).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${NOMINATIM_DIR:-$here/.build-nominatim}"
nominatim_version=5.3.3
extract_sha256=36c0f0029ed838897322382611b67e8e5e7bcb07d5b17a25f3574dec54f1c23c
sdist_url="https://files.pythonhosted.org/packages/21/ee/5c637671338211a1ff0c1fda0300e33f745335bc3eddd4a60b19122c0812/osrm_bindings-26.10.0.tar.gz"
sdist_sha256=2ca271af60e0628394f070e9a0f371bf18ff6c6e23769acc620d4aa7c07ed32c
# A port of the checkout's own, so that two checkouts on one machine each keep their cluster.
pg_port="${NOMINATIM_PG_PORT:-$((15432 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 1000))}"
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"

as_db_user() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Runs nominatim in the project directory, against this cluster.
nominatim() {
    (cd "$dir/project" && env \
        NOMINATIM_DATABASE_DSN="pgsql:dbname=nominatim;host=$dir/run;port=$pg_port;user=nominatim" \
        NOMINATIM_DATABASE_WEBUSER=nominatim \
        "$dir/venv/bin/nominatim" "$@")
}

# Under a lock: tests start their APIs at once, and two starts of a stopped cluster would race (the second's pg_ctl
# fails: "another server might be running").
start_database() {
    (
        flock 9
        if as_db_user "$pg_bin/pg_ctl" -D "$dir/pg" status >/dev/null 2>&1; then exit 0; fi
        as_db_user "$pg_bin/pg_ctl" -D "$dir/pg" -l "$dir/run/postgres.log" -w -t 60 \
            -o "-p $pg_port -k $dir/run -c listen_addresses='' -c fsync=off -c full_page_writes=off" start >/dev/null 9>&-
    ) 9>"$dir/run/start.lock"
}

setup() {
    local packages=(postgresql postgresql-15-postgis-3 postgresql-contrib osm2pgsql libicu-dev pkg-config python3-venv
        python3-dev curl)
    local missing=()
    for package in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    if ((${#missing[@]} > 0)); then
        echo "nominatim: installing ${missing[*]}"
        local sudo=""
        if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
    fi
    mkdir -p "$dir"
    if [ ! -x "$dir/venv/bin/nominatim" ] || ! "$dir/venv/bin/python" -c "import falcon, uvicorn" 2>/dev/null; then
        echo "nominatim: installing nominatim-db and nominatim-api $nominatim_version from PyPI (PyICU compiles: minutes)"
        python3 -m venv "$dir/venv"
        "$dir/venv/bin/pip" install --quiet --disable-pip-version-check "nominatim-db==$nominatim_version" \
            "nominatim-api==$nominatim_version" "falcon==4.4.0" "uvicorn==0.54.0"
    fi
    if [ ! -f "$dir/monaco.osm.pbf" ]; then
        echo "nominatim: fetching Monaco's extract (osrm-bindings' source distribution, PyPI)"
        curl -sSfL -o "$dir/osrm.tar.gz" "$sdist_url"
        echo "$sdist_sha256  $dir/osrm.tar.gz" | sha256sum -c --quiet
        tar -xzf "$dir/osrm.tar.gz" -C "$dir" --strip-components=3 osrm_bindings-26.10.0/test/data/monaco.osm.pbf
        rm "$dir/osrm.tar.gz"
        echo "$extract_sha256  $dir/monaco.osm.pbf" | sha256sum -c --quiet
    fi
    if [ -f "$dir/imported" ]; then return; fi
    echo "nominatim: importing Monaco into a PostgreSQL cluster of its own ($dir/pg)"
    stop
    rm -rf "$dir/pg" "$dir/project" "$dir/run"
    mkdir -p "$dir/pg" "$dir/project" "$dir/run"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir/pg" "$dir/run"; fi
    as_db_user "$pg_bin/initdb" -D "$dir/pg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    start_database
    "$pg_bin/psql" -h "$dir/run" -p "$pg_port" -U postgres -q -c "CREATE ROLE nominatim SUPERUSER LOGIN"
    cp "$dir/monaco.osm.pbf" "$dir/project/"
    nominatim import --osm-file "$dir/project/monaco.osm.pbf" --threads 2 >"$dir/import.log" 2>&1 || {
        tail -20 "$dir/import.log" >&2
        echo "nominatim: the import failed (whole log: $dir/import.log)" >&2
        exit 1
    }
    touch "$dir/imported"
}

start() {
    local port="$1"
    [ -f "$dir/imported" ] || setup
    start_database
    # A session of its own, so that stop ends the server with everything it started.
    setsid bash "$0" serve-foreground "$port" >"$dir/serve-$port.log" 2>&1 &
    echo $! >"$dir/serve-$port.pid"
    for _ in $(seq 300); do
        if curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1; then return; fi
        sleep 0.1
    done
    tail -20 "$dir/serve-$port.log" >&2
    echo "nominatim: the API did not answer on port $port" >&2
    exit 1
}

stop() {
    for pidfile in "$dir"/serve-*.pid; do
        [ -f "$pidfile" ] || continue
        kill -- "-$(cat "$pidfile")" 2>/dev/null || true
        rm -f "$pidfile"
    done
    as_db_user "$pg_bin/pg_ctl" -D "$dir/pg" -m fast stop >/dev/null 2>&1 || true
}

case "${1:-}" in
setup) setup ;;
start) start "${2:?usage: scripts/nominatim.sh start PORT}" ;;
serve-foreground) nominatim serve --server "127.0.0.1:$2" ;;
serve)
    port="${2:?usage: scripts/nominatim.sh serve PORT}"
    [ -f "$dir/imported" ] || setup >&2
    start_database
    cd "$dir/project"
    exec env NOMINATIM_DATABASE_DSN="pgsql:dbname=nominatim;host=$dir/run;port=$pg_port;user=nominatim" \
        NOMINATIM_DATABASE_WEBUSER=nominatim "$dir/venv/bin/nominatim" serve --server "127.0.0.1:$port"
    ;;
stop) stop ;;
*)
    echo "usage: scripts/nominatim.sh setup | start PORT | serve PORT | stop" >&2
    exit 2
    ;;
esac
