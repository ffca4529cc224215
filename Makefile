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
# The .deb version: a v1.2.3 tag gives 1.2.3, an untagged tree 0.0.0~git<hash>.
DEB_VERSION ?= $(shell v=$$(git describe --tags --match 'v[0-9]*' 2>/dev/null) && echo "$${v\#v}" | tr - '~' \
	|| echo "0.0.0~git$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
ARCH    ?= $(shell $(GO) env GOARCH)
NFPM    ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2

DAEMONS := $(notdir $(wildcard cmd/*))

.PHONY: all build test unit vet lint fmt bench fuzz run sim peers clean package

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

# Go benchmarks plus the load-tool benchmarks recorded in docs/benchmarks.md,
# then a table of their ratios to same-run ceilings, with CPU and load average.
bench: build
	GO=$(GO) scripts/bench.sh

# Every fuzz target (HTTP bodies and query strings of every daemon, parsers)
# for FUZZTIME each; `make test` runs their seeds only.
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

# The whole suite in one process; HMS_DATA moves its data directory. DHCP
# listens on a loopback port for hms sim's relayed clients (no root needed;
# docs/sim.md), reds reaches the simulated BMCs on 8443.
SIM_UP_FLAGS = -bss-dhcp-listen 127.0.0.1:6767 -bss-dhcp-relay-port 6768 -bss-dhcp-config deploy/sim-dhcp.json \
	-reds-bmc-port 8443 -reds-bmc-insecure -reds-sls-refresh 10s
run: build
	$(BIN)/hms up -data-dir $${HMS_DATA:-./hms-data} $(SIM_UP_FLAGS)

# Simulated hardware against `make run` (in another terminal): NODES River
# nodes, and MOUNTAIN Mountain cabinets if set.
sim: build
	$(BIN)/hms sim -nodes $${NODES:-64} $${MOUNTAIN:+-mountain $$MOUNTAIN}

# The .deb (binaries, systemd units, /etc/default/hms, docs) into dist/, then
# scripts/package-check.sh lists it and checks what it holds.
package: build
	@mkdir -p dist
	VERSION=$(VERSION) DEB_VERSION=$(DEB_VERSION) ARCH=$(ARCH) $(NFPM) package -f deploy/nfpm.yaml -p deb -t dist/hms_$(DEB_VERSION)_$(ARCH).deb
	scripts/package-check.sh dist/hms_$(DEB_VERSION)_$(ARCH).deb $(VERSION)

clean:
	rm -rf $(BIN) dist
