# HMS suite. `make run` runs the suite on its embedded defaults; `make test` runs
# every test (installing the Debian test peers first when run as root).
GO      ?= go
BIN     ?= bin
# TEST_TIMEOUT bounds one package's tests; the whole run stays well under CI's limit.
TEST_TIMEOUT ?= 15m
# The code is pure Go: binaries build without a C compiler. Only the race
# detector needs cgo (and gcc, which `make peers` installs), so `test` turns
# it on for itself.
export CGO_ENABLED ?= 0
# VERSION is stamped into every binary (-version, `hms version`).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/hmsuite/hms/internal/version.stamped=$(VERSION)

DAEMONS := $(notdir $(wildcard cmd/*))

.PHONY: all build test unit vet lint fmt bench run peers clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

peers:
	@scripts/install-peers.sh

vet:
	$(GO) vet ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

# unit + integration tests, with the race detector; peer tests need the Debian
# peers (`make peers`) and fail rather than skip when CI=true.
test: peers lint
	CGO_ENABLED=1 $(GO) test -race -timeout $(TEST_TIMEOUT) ./...

unit:
	$(GO) test -timeout $(TEST_TIMEOUT) ./...

# Go benchmarks plus the load-tool benchmarks recorded in docs/benchmarks.md.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...
	@scripts/bench.sh

# The whole suite in one process; HMS_DATA moves its data directory.
run: build
	$(BIN)/hms up -data-dir $${HMS_DATA:-./hms-data}

clean:
	rm -rf $(BIN)
