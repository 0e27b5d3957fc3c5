#!/usr/bin/env python3
"""Reference answers for the places index, from independent implementations, for `places-bench --agreement`.

Writes, deterministically (seeded), into OUTPUT_DIR:
- `reference-timezones.tsv`: latitude, longitude, tzfpy's time zone (tzfpy 2.1.1, in the virtual environment
  prepare_places.py made), for random points uniform on the sphere (land and sea);
- `reference-regions.tsv`: latitude, longitude, country, the ISO 3166-2 code of the region polygon that contains
  the point (shapely, even-odd over region-boundaries.geojson), for random points inside the countries the
  polygons cover whole (their bounding boxes sampled, points in no polygon left out).

    python3 tools/places/reference_points.py PLACE_BUILD_DIR [--points N]
"""
import argparse
import json
import math
import os
import random
import subprocess

from shapely.geometry import Point, shape
from shapely.strtree import STRtree

COVERED = ["AU", "BE", "CA", "CN", "US"]  # every region of these has a polygon (India lacks Ladakh's)

TZ_SCRIPT = """
import sys
from tzfpy import get_tz
for line in sys.stdin:
    lat, lon = line.split()
    print(get_tz(float(lon), float(lat)) or "")
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--points", type=int, default=200_000)
    arguments = parser.parse_args()
    rng = random.Random(32)

    points = []
    for _ in range(arguments.points):
        lat = math.degrees(math.asin(rng.uniform(-1, 1)))
        points.append((round(lat, 6), round(rng.uniform(-180, 180), 6)))
    python = os.path.join(arguments.directory, "cache", "tzfpy-venv", "bin", "python")
    answers = subprocess.run(
        [python, "-c", TZ_SCRIPT], input="".join(f"{lat} {lon}\n" for lat, lon in points),
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    with open(os.path.join(arguments.directory, "reference-timezones.tsv"), "w") as out:
        for (lat, lon), zone in zip(points, answers):
            out.write(f"{lat}\t{lon}\t{zone}\n")

    with open(os.path.join(arguments.directory, "region-boundaries.geojson")) as file:
        features = json.load(file)["features"]
    regions = [(f["properties"]["code"], shape(f["geometry"])) for f in features]
    tree = STRtree([geometry for _, geometry in regions])
    written = 0
    with open(os.path.join(arguments.directory, "reference-regions.tsv"), "w") as out:
        for country in COVERED:
            mine = [(code, g) for code, g in regions if code.startswith(country + "-")]
            west = min(g.bounds[0] for _, g in mine)
            south = min(g.bounds[1] for _, g in mine)
            east = max(g.bounds[2] for _, g in mine)
            north = max(g.bounds[3] for _, g in mine)
            found = 0
            while found < arguments.points // 10:
                point = Point(round(rng.uniform(west, east), 6), round(rng.uniform(south, north), 6))
                hits = [regions[i][0] for i in tree.query(point) if regions[i][1].contains(point)]
                hits = [code for code in hits if code.startswith(country + "-")]
                if len(hits) != 1:
                    continue
                out.write(f"{point.y}\t{point.x}\t{country}\t{hits[0]}\n")
                found += 1
                written += 1
    print(f"{len(points)} time-zone points, {written} region points")


if __name__ == "__main__":
    main()
