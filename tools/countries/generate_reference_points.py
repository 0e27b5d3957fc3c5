#!/usr/bin/env python3
"""Generates the reference answers the country index is tested against, with an independent implementation:
shapely (GEOS) point-in-polygon on the same prepared boundaries.

Points: 100,000 uniform on the sphere, and 50,000 within about 1 km of a boundary vertex (where answers are
hardest), all on the index's 1e-7 degree grid. Output, little-endian: "GWRP", point count (u32), country count
(u32), the codes (2 bytes each, in the GeoJSON's order), then per point x, y (i32, 1e-7 degree) and the
country's number (u8; 255 for none). A point in two countries' polygons (overlapping data) takes the first in
code order, as the index does. Seeded, so deterministic.

    python3 tools/countries/generate_reference_points.py BOUNDARIES.geojson OUTPUT.bin
"""
import json
import math
import random
import struct
import sys

import numpy
import shapely
from shapely.geometry import shape

UNIFORM = 100_000
NEAR_BOUNDARIES = 50_000


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as source:
        features = json.load(source)["features"]
    codes = [feature["properties"]["code"] for feature in features]
    geometries = [shape(feature["geometry"]) for feature in features]
    random_source = random.Random(20261121)

    points = []
    for _ in range(UNIFORM):
        longitude = random_source.uniform(-180, 180)
        latitude = math.degrees(math.asin(random_source.uniform(-1, 1)))
        points.append((round(longitude * 1e7), round(latitude * 1e7)))
    vertices = [c for g in geometries for polygon in getattr(g, "geoms", [g]) for c in polygon.exterior.coords]
    while len(points) < UNIFORM + NEAR_BOUNDARIES:
        longitude, latitude = vertices[random_source.randrange(len(vertices))]
        reach = 0.01  # degrees, about 1 km of latitude
        longitude += random_source.uniform(-reach, reach)
        latitude += random_source.uniform(-reach, reach)
        # Off the globe is skipped, not clamped: clamping would put points exactly on the edges the data
        # draws along -180/180 and -90, where shapely's `contains` (boundary excluded) and the index's rule
        # for boundary points (an infinitesimal step north) rightly differ. Boundary points have tests of their own.
        if -180 < longitude < 180 and -90 < latitude < 90:
            points.append((round(longitude * 1e7), round(latitude * 1e7)))
    points = [(x if x < 1_800_000_000 else x - 3_600_000_000, y) for x, y in points]  # 180 is written -180

    shapely_points = shapely.points([x / 1e7 for x, _ in points], [y / 1e7 for _, y in points])
    answers = numpy.full(len(points), 255, dtype=numpy.uint8)
    for number in reversed(range(len(geometries))):  # first in code order wins
        inside = shapely.contains_xy(geometries[number], [x / 1e7 for x, _ in points], [y / 1e7 for _, y in points])
        answers[inside] = number
    del shapely_points

    with open(sys.argv[2], "wb") as output:
        output.write(b"GWRP" + struct.pack("<II", len(points), len(codes)))
        for code in codes:
            output.write(code.encode("ascii")[:2].ljust(2, b" "))
        for (x, y), answer in zip(points, answers):
            output.write(struct.pack("<iiB", x, y, int(answer)))
    print(f"{len(points)} points, {int((answers != 255).sum())} in a country -> {sys.argv[2]}")


if __name__ == "__main__":
    main()
