# Lima — the two commands that matter: `make demo` and `make test`.
GO ?= go
FUZZTIME ?= 60s

.PHONY: demo test bench lint fuzz build clean

## demo: build the demo lake in ./lima-demo from the bundled dirty ERP sample
demo:
	$(GO) run ./cmd/lima-tui demo --dir lima-demo --headless

## test: everything CI runs (installs/starts what the tests need)
test:
	bash scripts/test.sh

## bench: 1M-row load, rows/s, MB/s and peak memory, next to DuckDB;
## a 1M-row PostgreSQL table into Iceberg next to COPY ... TO STDOUT of it
## (skipped loudly without a server; DSN in LIMA_BENCH_POSTGRES_DSN);
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
