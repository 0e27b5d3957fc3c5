#!/usr/bin/env python3
"""Reference answers for geoworker's polygon pins, from shapely (GEOS).

Reads JSON from standard input: a list of cases, each {"polygons": [[ring, ...], ...], "points": [[lon, lat], ...]}
with GeoJSON rings of [lon, lat]. Writes one JSON list per case: for each point [inside, edgeDistanceMetres].

*inside* is shapely's answer in the longitude/latitude plane (RFC 7946's straight edges); the edge distance is
shapely's distance to the boundary in the plane tangent at the point, as geoworker measures it: x = (lon - lon0)
* cos(lat0) * k, y = (lat - lat0) * k, k = metres per degree on the sphere of mean radius 6371008.8 m.

Usage: polygon_reference.py < cases.json   (needs shapely from PyPI; scripts/setup.sh installs it)
"""
import json
import math
import sys

from shapely.affinity import affine_transform
from shapely.geometry import MultiPolygon, Point, Polygon

METRES_PER_DEGREE = 6371008.8 * math.pi / 180


def main():
    cases = json.load(sys.stdin)
    answers = []
    for case in cases:
        shape = MultiPolygon([Polygon(rings[0], rings[1:]) for rings in case["polygons"]])
        boundary = shape.boundary
        results = []
        for lon, lat in case["points"]:
            inside = shape.contains(Point(lon, lat))
            east = math.cos(lat * math.pi / 180) * METRES_PER_DEGREE
            # x' = east * x - east * lon, y' = k * y - k * lat
            plane = affine_transform(boundary, [east, 0, 0, METRES_PER_DEGREE, -east * lon, -METRES_PER_DEGREE * lat])
            results.append([inside, plane.distance(Point(0, 0))])
        answers.append(results)
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
