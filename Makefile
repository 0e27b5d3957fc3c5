# geoworker: the two commands a new machine needs are `make demo` and `make test`.
# Every target installs what is missing first (scripts/setup.sh), so a fresh Debian machine with Swift works.

SWIFT_FORMAT_PATHS := Package.swift Sources Tests

.PHONY: setup build test lint format bench

setup:
	@scripts/setup.sh

build: setup
	swift build

## Formatting check (swift-format with NIO's configuration), then every test.
test: setup lint
	swift build --build-tests
	swift test

lint:
	swift format lint --strict --recursive $(SWIFT_FORMAT_PATHS)

format:
	swift format --in-place --recursive $(SWIFT_FORMAT_PATHS)

## Benchmarks: the core (decoding, tracker, store) and the Kafka layer against raw librdkafka.
bench: setup
	swift run -c release geocore-bench
	swift run -c release kafka-bench
