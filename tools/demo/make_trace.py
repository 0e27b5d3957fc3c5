"""Writes the demo's sample trace: Sources/Worker/Resources/demo-trace.jsonl.

Three devices on real roads' straight-line approximations, one fix a minute, with the pins they track:
- truck-17 (a French speaker) drives Lyon -> Geneva: France -> Switzerland, where French is one of four
  official languages (suggested fr-CH), passing its Geneva depot pin.
- van-3 drives Strasbourg -> Offenburg over the Rhine: France -> Germany, through its Kehl warehouse pin.
- car-9 tracks its Brussels office pin while parked inside it (an initial enter), then drives to Maastricht:
  Belgium -> the Netherlands, leaving the office pin and entering a Maastricht pin.
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


# truck-17: Lyon -> Geneva, pin near the end of the route.
truck = route((45.7640, 4.8357), (46.2044, 6.1432), 40)
command(START - MINUTE, {"type": "track", "deviceId": "truck-17", "pin": {
    "id": "geneva-depot", "lat": round(truck[37][0], 6), "lon": round(truck[37][1], 6), "radius": 1500,
    "title": "Geneva depot", "metadata": {"site": "GVA-2"}}})
drive("truck-17", truck, START, ["fr-FR", "en"])

# van-3: Strasbourg -> Kehl -> Offenburg, warehouse pin in Kehl.
van = route((48.5734, 7.7521), (48.5700, 7.8150), 6) + route((48.5700, 7.8150), (48.4729, 7.9447), 12)[1:]
command(START - MINUTE, {"type": "track", "deviceId": "van-3", "pin": {
    "id": "kehl-warehouse", "lat": 48.5706, "lon": 7.8190, "radius": 400, "title": "Kehl warehouse"}})
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
drive("car-9", route(office, (50.8514, 5.6910), 30)[1:], end, ["nl-BE", "fr-BE"])

lines.sort(key=lambda line: (line["timestamp"], line["topic"] == "positions", line["key"]))
with open("Sources/Worker/Resources/demo-trace.jsonl", "w") as out:
    for line in lines:
        out.write(json.dumps(line, separators=(",", ":"), sort_keys=True) + "\n")
print(f"{len(lines)} messages")
