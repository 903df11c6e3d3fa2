# Lima — the two commands that matter: `make demo` and `make test`.
GO ?= go
FUZZTIME ?= 60s

.PHONY: demo demo-s3 test bench lint fuzz build clean soak mutate docs

## demo: build the demo lake in ./lima-demo from the bundled dirty ERP sample
demo:
	$(GO) run ./cmd/lima-tui demo --dir lima-demo --headless

## demo-s3: the same demo with the sample files in a bucket and the lake on
## S3, against the loopback S3 server (scripts/ensure-s3.sh starts it)
demo-s3:
	@eval "$$(bash scripts/ensure-s3.sh --env)" && \
	  AWS_ENDPOINT_URL="$$LIMA_TEST_S3_ENDPOINT" AWS_REGION="$$LIMA_TEST_S3_REGION" \
	  AWS_ACCESS_KEY_ID="$$LIMA_TEST_S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$$LIMA_TEST_S3_SECRET_KEY" \
	  AWS_EC2_METADATA_DISABLED=true \
	  $(GO) run ./cmd/lima-tui demo --dir lima-demo-s3 --headless --s3 s3://lima-demo/erp_quality

## test: everything CI runs (installs/starts what the tests need)
test:
	bash scripts/test.sh

## tui-test: the wizard walked in tmux through every gate of the demo (TUI_SIZE=100x30 default; make test walks 100x30 and 80x24)
.PHONY: tui-test
tui-test:
	bash scripts/tui-test.sh

## soak: the long randomized tests (change capture: 300 random change
## streams against a reference replay; the kill test at more points; the
## kill matrix, every verb that writes at every kill point, flow/killmatrix_test.go)
soak:
	LIMA_SOAK=1 $(GO) test -count=1 -timeout 150m -run 'TestCDCRandomStreams|TestCDCKill|TestWatch|TestLifecycle|TestKillMatrix' -v ./engine/run/ ./flow/

## bench: 1M-row load, rows/s, MB/s and peak memory, next to DuckDB;
## a 1M-row PostgreSQL table into Iceberg next to COPY ... TO STDOUT of it
## (skipped loudly without a server; DSN in LIMA_BENCH_POSTGRES_DSN);
## then the exception queue's list/filter/count over 1,000,000 exceptions
bench:
	cd bench && $(GO) run . $(BENCHFLAGS)
	@echo "== exception ledger: 1,000,000 exceptions (seeding takes about a minute)"
	LIMA_BENCH_1M=1 $(GO) test -run '^$$' -bench 'List1M$$' -benchtime 200x ./engine/ledger/
	@echo "== exception browser over 1,000,000 exceptions: first screen and one keypress (ms)"
	LIMA_BENCH_1M=1 $(GO) test -run '^$$' -bench 'BrowserFirstScreen1M$$' -benchtime 20x ./wizard/

## mutate: mutation testing (gremlins) of the packages that hold guarantees
## (ui/textsafe, gates, engine/run, engine/ledger, engine/sink/icesink,
## internal/redact, the teardown wiring), one package at a time with the
## services up; prints the kill rate per package, every surviving mutant and
## a total. Slow (hours), not part of CI.
## MUTATE_PKGS="ui/textsafe gates" narrows it; see scripts/mutate.sh.
mutate:
	bash scripts/mutate.sh $(MUTATE_PKGS)

## lint: gofmt, go vet and staticcheck (scripts/test.sh installs it)
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	"$$($(GO) env GOPATH)/bin/staticcheck" ./...

## fuzz: the fuzz targets, $(FUZZTIME) each
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## docs: regenerate docs/cli.md, the command-line reference, from the flag
## definitions (TestCLIReferenceIsCurrent fails until it is regenerated)
docs:
	$(GO) run ./cmd/lima-tui help --markdown > docs/cli.md.tmp && mv docs/cli.md.tmp docs/cli.md

build:
	$(GO) build -o bin/lima-tui ./cmd/lima-tui

clean:
	rm -rf bin lima-demo lima-demo-s3 .mutate
