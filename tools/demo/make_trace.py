"""Writes the demo's sample trace: Sources/geoworker/Resources/demo-trace.jsonl.

Three devices on real roads' straight-line approximations, one fix a minute, with the pins they track:
- truck-17 (a French speaker) drives Lyon -> Geneva: France -> Switzerland, where French is one of four
  official languages (suggested fr-CH); its Geneva depot pin asks for 5 minutes' warning (approachSeconds),
  announced a few minutes out at its reported speed, then entered and left.
- van-3 drives Strasbourg -> Offenburg over the Rhine: France -> Germany, stopping for four minutes at its
  Kehl warehouse, a polygon (GeoJSON, with the yard office cut out as a hole) with a 3-minute dwell.
- car-9 tracks its Brussels office pin while parked inside it (an initial enter), then drives to Maastricht:
  Belgium -> the Netherlands, leaving the office pin, passing a toll gantry pin between two fixes a minute
  apart (a crossing: neither fix is inside) and entering a Maastricht pin.
- rig-4 (an English speaker) drives Gary, Indiana -> New Buffalo, Michigan along Lake Michigan: from Indiana to
  Michigan (regions from their polygons) and from central to eastern time (America/Chicago, UTC-6, to
  America/Detroit, UTC-5), although north-west Indiana and Michigan are neighbours: the time-zone line is not the
  state line's.
Every device's first fix announces its country, region and time zone; the European ones' regions come from the
nearest place of their country (no region polygons there).
Each line: {"topic": "positions"|"commands", "key": deviceId, "timestamp": epoch ms, "message": {...}}.
Run: python3 tools/demo/make_trace.py
"""
import json
from datetime import datetime, timezone

START = int(datetime(2026, 11, 21, 8, 0, tzinfo=timezone.utc).timestamp() * 1000)
MINUTE = 60_000


def route(a, b, steps):
    return [(a[0] + (b[0] - a[0]) * i / steps, a[1] + (b[1] - a[1]) * i / steps) for i in range(steps + 1)]


def iso(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


lines = []


def command(ms, message):
    lines.append({"topic": "commands", "key": message["deviceId"], "timestamp": ms, "message": message})


def drive(device, points, start, languages):
    for i, (lat, lon) in enumerate(points):
        ms = start + i * MINUTE
        message = {"deviceId": device, "lat": round(lat, 6), "lon": round(lon, 6), "timestamp": iso(ms),
                   "accuracy": 10.0, "speed": 22.0}
        if languages:
            message["languages"] = languages
        lines.append({"topic": "positions", "key": device, "timestamp": ms, "message": message})
    return start + len(points) * MINUTE


# truck-17: Lyon -> Geneva, pin near the end of the route, announced when 5 minutes away or less.
truck = route((45.7640, 4.8357), (46.2044, 6.1432), 40)
command(START - MINUTE, {"type": "track", "deviceId": "truck-17", "pin": {
    "id": "geneva-depot", "lat": round(truck[37][0], 6), "lon": round(truck[37][1], 6), "radius": 1500,
    "title": "Geneva depot", "metadata": {"site": "GVA-2"}, "approachSeconds": 300}})
drive("truck-17", truck, START, ["fr-FR", "en"])

# van-3: Strasbourg -> Kehl, four minutes at the warehouse (a polygon with a hole, dwell 3 minutes), -> Offenburg.
warehouse = [[7.8150, 48.5685], [7.8235, 48.5688], [7.8240, 48.5722], [7.8195, 48.5730], [7.8148, 48.5718],
             [7.8150, 48.5685]]
office_hole = [[7.8200, 48.5712], [7.8210, 48.5712], [7.8210, 48.5718], [7.8200, 48.5718], [7.8200, 48.5712]]
command(START - MINUTE, {"type": "track", "deviceId": "van-3", "pin": {
    "id": "kehl-warehouse", "title": "Kehl warehouse", "dwellSeconds": 180,
    "shape": {"type": "Polygon", "coordinates": [warehouse, office_hole]}}})
bay = (48.5700, 7.8180)
van = route((48.5734, 7.7521), bay, 6) + [bay] * 4 + route(bay, (48.4729, 7.9447), 12)[1:]
drive("van-3", van, START, ["de-DE"])

# car-9: parked at the Brussels office for five minutes, tracks the office pin while inside it, then drives
# to Maastricht, where a second pin waits.
office = (50.8466, 4.3528)
parked = [office] * 5
end = drive("car-9", parked, START, ["nl-BE", "fr-BE"])
command(START + 2 * MINUTE + 30_000, {"type": "track", "deviceId": "car-9", "pin": {
    "id": "brussels-office", "lat": office[0], "lon": office[1], "radius": 300, "title": "Brussels office"}})
command(START + 2 * MINUTE + 40_000, {"type": "track", "deviceId": "car-9", "pin": {
    "id": "maastricht-client", "lat": 50.8514, "lon": 5.6910, "radius": 800, "title": "Client in Maastricht"}})
car = route(office, (50.8514, 5.6910), 30)[1:]
# The toll gantry sits half-way between two fixes: 1.6 km from each, on the line between them.
gantry = ((car[9][0] + car[10][0]) / 2, (car[9][1] + car[10][1]) / 2)
command(START + 2 * MINUTE + 50_000, {"type": "track", "deviceId": "car-9", "pin": {
    "id": "e40-gantry", "lat": round(gantry[0], 6), "lon": round(gantry[1], 6), "radius": 300,
    "title": "E40 toll gantry"}})
drive("car-9", car, end, ["nl-BE", "fr-BE"])

# rig-4: Gary, IN -> New Buffalo, MI.
drive("rig-4", route((41.5934, -87.3464), (41.7939, -86.7439), 40), START, ["en-US"])

lines.sort(key=lambda line: (line["timestamp"], line["topic"] == "positions", line["key"]))
with open("Sources/geoworker/Resources/demo-trace.jsonl", "w") as out:
    for line in lines:
        out.write(json.dumps(line, separators=(",", ":"), sort_keys=True) + "\n")
print(f"{len(lines)} messages")
