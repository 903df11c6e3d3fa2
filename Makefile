# Lima — the two commands that matter: `make demo` and `make test`.
GO ?= go
FUZZTIME ?= 60s

.PHONY: demo test bench lint fuzz build clean soak

## demo: build the demo lake in ./lima-demo from the bundled dirty ERP sample
demo:
	$(GO) run ./cmd/lima-tui demo --dir lima-demo --headless

## test: everything CI runs (installs/starts what the tests need)
test:
	bash scripts/test.sh

## soak: the long randomized tests (change capture: 300 random change
## streams against a reference replay; the kill test at more points)
soak:
	LIMA_SOAK=1 $(GO) test -count=1 -timeout 60m -run 'TestCDCRandomStreams|TestCDCKill|TestWatch' -v ./engine/run/ ./flow/

## bench: 1M-row load, rows/s, MB/s and peak memory, next to DuckDB;
## then the exception queue's list/filter/count over 1,000,000 exceptions
bench:
	cd bench && $(GO) run . $(BENCHFLAGS)
	@echo "== exception ledger: 1,000,000 exceptions (seeding takes about a minute)"
	LIMA_BENCH_1M=1 $(GO) test -run '^$$' -bench 'List1M$$' -benchtime 200x ./engine/ledger/

## lint: gofmt and go vet
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

## fuzz: the fuzz targets, $(FUZZTIME) each
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

build:
	$(GO) build -o bin/lima-tui ./cmd/lima-tui

clean:
	rm -rf bin lima-demo
