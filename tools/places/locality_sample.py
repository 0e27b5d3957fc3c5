#!/usr/bin/env python3
"""How the locality changed with issue 49's rule, on a sample of random land points.

1,000 points uniform on the sphere (seed 49) that `geoworker geocode --places` puts in a country with a locality;
for each, the locality before the rule (the nearest place of the point's country, as the index's places.tsv lists
them) against the one geocode answers now (the town a person would name, with the quarter as its district).

Needs a release build of geoworker, the places index (`make places`), numpy and scipy:
    python3 tools/places/locality_sample.py [.build-places]
"""
import collections
import json
import math
import random
import subprocess
import sys

import numpy as np
from scipy.spatial import cKDTree


def unit_vector(latitude, longitude):
    lat, lon = math.radians(latitude), math.radians(longitude)
    return (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else ".build-places"
    places = collections.defaultdict(list)
    with open(f"{build}/places.tsv", encoding="utf-8") as table:
        for row in table:
            fields = row.rstrip("\n").split("\t")  # id, name, lat, lon, country, region, population, ...
            places[fields[4]].append((fields[1], float(fields[2]), float(fields[3])))
    trees = {
        country: (cKDTree(np.array([unit_vector(lat, lon) for _, lat, lon in rows])), rows)
        for country, rows in places.items()
    }
    random_points = random.Random(49)
    candidates = []
    for _ in range(6000):
        z, longitude = random_points.uniform(-1, 1), random_points.uniform(-180, 180)
        candidates.append((math.degrees(math.asin(z)), longitude))
    lines = "".join(f"{lat:.5f},{lon:.5f}\n" for lat, lon in candidates)
    answers = subprocess.run(
        [".build/release/geoworker", "geocode", "--places", "--places-index", f"{build}/places.idx", "--input", "-"],
        input=lines.encode(), capture_output=True, check=False,
    ).stdout.decode().splitlines()
    sample = []
    for point, line in zip(candidates, answers):
        answer = json.loads(line)
        if answer.get("country") in trees and answer.get("locality"):
            sample.append((point, answer))
        if len(sample) == 1000:
            break
    changed = []
    for (lat, lon), answer in sample:
        tree, rows = trees[answer["country"]]
        _, nearest = tree.query(unit_vector(lat, lon))
        before, after = rows[nearest][0], answer["locality"]["name"]
        if before != after:
            district = answer["locality"].get("district", {}).get("name")
            changed.append(f"{lat:.5f},{lon:.5f} {answer['country']}: {before} -> {after}"
                           + (f" (district {district})" if district else ""))
    print(f"{len(sample)} land points; {len(changed)} changed")
    for line in changed:
        print(line)


if __name__ == "__main__":
    main()
