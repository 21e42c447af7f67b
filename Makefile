# virtual-ingress: build, lint and test entry points. `make help` lists the targets.
# Every tool is built from the Go module proxy into bin/ (nothing is downloaded as a prebuilt binary).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

GO ?= go
STAMPS := bin/.stamps
DIST ?= dist
# JUnit XML reports (git-ignored).
JUNIT_DIR ?= _output/junit

# Tool versions, read from the go.mod files without running go (so a no-op `make tools` is instant).
# $(call modver,MODULE,GO.MOD) prints MODULE's required version.
modver = $(shell awk '$$1 == "require" { $$1 = $$2; $$2 = $$3 } $$1 == "$(1)" { print $$2; exit }' $(2))
HELM_VERSION := $(call modver,helm.sh/helm/v3,go.mod)
KYVERNO_VERSION := $(call modver,github.com/kyverno/kyverno,go.mod)
GOLANGCI_LINT_VERSION := $(call modver,github.com/golangci/golangci-lint/v2,tools/golangci-lint/go.mod)
HELM_DOCS_VERSION := $(call modver,github.com/norwoodj/helm-docs,tools/helm-docs/go.mod)
COSIGN_VERSION := $(call modver,github.com/sigstore/cosign/v2,tools/cosign/go.mod)
GO_VERSION := $(shell $(GO) env GOVERSION)

# Kubernetes version the charts target. As in helm's own Makefile it follows the k8s.io/client-go version the
# binaries are built with (v0.36.3 -> 1.36.3): it is baked into bin/helm as the default .Capabilities.KubeVersion
# (the library default is v1.20) and passed explicitly with --kube-version.
CLIENT_GO_VERSION := $(call modver,k8s.io/client-go,go.mod)
KUBE_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(CLIENT_GO_VERSION)))
KUBE_MAJOR := $(shell echo $$(( $(firstword $(KUBE_VERSION_PARTS)) + 1 )))
KUBE_MINOR := $(word 2,$(KUBE_VERSION_PARTS))
KUBE_VERSION ?= $(KUBE_MAJOR).$(KUBE_MINOR).$(word 3,$(KUBE_VERSION_PARTS))

HELM_LDFLAGS := \
	-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$(KUBE_MAJOR) \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(KUBE_MINOR) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$(KUBE_MAJOR) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(KUBE_MINOR)

# Version-keyed stamps: a tool is rebuilt when its version (or the binary) changes, and not otherwise.
# Force a rebuild with `make -B tools` or `make clean-tools`.
HELM_STAMP := $(STAMPS)/helm-$(HELM_VERSION)-kube$(KUBE_MAJOR).$(KUBE_MINOR)
KYVERNO_STAMP := $(STAMPS)/kyverno-$(KYVERNO_VERSION)
GOLANGCI_LINT_STAMP := $(STAMPS)/golangci-lint-$(GOLANGCI_LINT_VERSION)-$(GO_VERSION)
# Not "helm-docs-...": the stamp rule drops every stamp sharing the name's first word, which would be helm's.
HELM_DOCS_STAMP := $(STAMPS)/helmdocs-$(HELM_DOCS_VERSION)
COSIGN_STAMP := $(STAMPS)/cosign-$(COSIGN_VERSION)

# bin/policytest is project code: rebuilt when its sources or the module files change.
POLICYTEST_SRCS := $(shell find tools/policytest internal -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum

CHARTS := $(patsubst %/Chart.yaml,%,$(wildcard charts/*/Chart.yaml))

# helm-docs writes each charts/<chart>/README.md from its README.md.gotmpl and the `# --` comments of its values.yaml.
# The values table keeps values.yaml's order, so related values stay together. helm-docs exits 0 when it skips a
# chart, so only warnings are logged and the docs targets fail on any log line.
HELM_DOCS_FLAGS := --chart-search-root charts --template-files README.md.gotmpl --sort-values-order file --log-level warning

PREVIEW_VIRTUALINGRESSES ?= fixtures/examples/virtualingresses.yaml
PREVIEW_SERVICES ?= fixtures/examples/services.yaml

# Everything CI runs (`.ci/run` calls `make test`). Lint runs through moon, as a contributor runs it, so that the
# documented `moon run lint` is proven from the clean state CI starts in (moon's task calls `make lint`). Each target
# names what it needs (Debian packages, the local control plane's binaries) as prerequisites, so `make test` on a
# fresh machine installs and builds everything itself.
TEST_TARGETS := moon-lint unit golden policy-test parity devcluster-test release-test e2e
# The node tier (every chart installed with `helm install --wait` on a real node) needs root on Linux; without it,
# `make test` runs every other tier and says so.
IS_ROOT := $(filter 0,$(shell id -u))
TEST_TARGETS += $(if $(IS_ROOT),e2e-node)

# The Debian packages tests run for real, as PACKAGE=PROBE (a command, or a path glob that exists once it is
# installed): HAProxy for the apps-ingress proxy, PostgreSQL's server for ssvirt-api's store
# (tests/ssvirt/pgserver).
DEBIAN_PACKAGES := haproxy=haproxy postgresql=pg_ctl
# A node (the node tier, `devcluster up --with-node`) also runs containerd, runc, the CNI plugins, conntrack, iptables
# and tini (the first process of the node's PID namespace), and the node tier makes images of busybox-static
# (HAProxy's shell) and curl (`helm test`). They are installed only for root, who alone can run a node.
NODE_DEBIAN_PACKAGES := containerd=containerd runc=runc containernetworking-plugins=/usr/lib/cni/bridge conntrack=conntrack iptables=iptables-save \
	busybox-static=/bin/busybox curl=curl bind9-dnsutils=dig openssl=openssl tini=tini
DEBIAN_PACKAGES += $(if $(IS_ROOT),$(NODE_DEBIAN_PACKAGES))

# Go packages `make unit` tests; a product's moon project narrows it to its own packages.
PKGS ?= ./...

# The end-to-end suites and the benchmarks start a control plane as local processes (internal/testkit/devcluster);
# its binaries are built once into bin/devcluster/, keyed by version.
E2E_TIMEOUT ?= 45m

# What a shipped binary (cmd/...) must never link: the test kit, the tools, Kyverno and Helm.
FORBIDDEN_DEPS := ^github.com/virtual-ingress/virtual-ingress/(internal/testkit|tools|tests)/|^github.com/kyverno/|^helm.sh/helm/

##@ General

.PHONY: help
help: ## List the targets
	@awk 'BEGIN { FS = ":.*## " } \
		/^##@/ { printf "\n%s\n", substr($$0, 5); next } \
		/^[a-zA-Z0-9_.\/-]+:.*## / { printf "  %-22s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@echo
	@echo "Versions: helm $(HELM_VERSION), kyverno $(KYVERNO_VERSION), golangci-lint $(GOLANGCI_LINT_VERSION), helm-docs $(HELM_DOCS_VERSION), cosign $(COSIGN_VERSION), kube $(KUBE_VERSION), $(GO_VERSION)"

##@ Test

.PHONY: test
test: $(TEST_TARGETS) ## Everything CI runs: moon run lint, unit, golden, policy-test, parity, devcluster-test, release-test, e2e
	@echo "make test: all of $(TEST_TARGETS) passed"
	@$(if $(IS_ROOT),:,echo "make test: the node tier (make e2e-node) was not run: it needs root")

.PHONY: lint
lint: tree-check vet golangci-lint deps-check helm-lint docs-check generate-check ## Static checks: committed files, go vet, golangci-lint, shipped deps, helm lint, chart READMEs, generated code and CRDs

.PHONY: moon-lint
moon-lint: bin/moon ## `moon run lint` (the root project's lint task, which is `make lint`)
	bin/moon run lint

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...
	$(GO) vet -tags e2e ./tests/...
	$(GO) vet -tags devcluster ./internal/testkit/devcluster/
	$(GO) vet -tags release ./internal/testkit/registry/ ./tools/release/

# Only source is committed: no binary (ELF, Mach-O, PE, archives) and nothing over 1 MiB unless
# tools/treecheck/allowed.txt lists it.
.PHONY: tree-check
tree-check: ## Fail if git tracks a binary or a file larger than 1 MiB (allow-list: tools/treecheck/allowed.txt)
	$(GO) run ./tools/treecheck

# One-way imports: a binary that ships is its product's code and libraries, never what only tests or builds it.
.PHONY: deps-check
deps-check: ## Fail if a shipped binary (go list -deps ./cmd/...) imports the test kit, tools/, tests/, Kyverno or Helm
	@for cmd in cmd/*/; do \
		echo "+ go list -deps ./$$cmd | grep -E '$(FORBIDDEN_DEPS)'"; \
		if leaks=$$($(GO) list -deps "./$$cmd" | grep -E '$(FORBIDDEN_DEPS)'); then \
			echo "deps-check: ./$$cmd imports what must not ship:" >&2; echo "$$leaks" >&2; exit 1; \
		fi; \
	done

.PHONY: golangci-lint
golangci-lint: bin/golangci-lint ## golangci-lint run ./... (config: .golangci.yml)
	bin/golangci-lint run ./...

.PHONY: helm-lint
helm-lint: bin/helm ## helm lint --strict every chart, alone and with each ci/*-values.yaml
	@for chart in $(CHARTS); do \
		echo "+ helm lint --strict --kube-version $(KUBE_VERSION) $$chart"; \
		bin/helm lint --strict --kube-version $(KUBE_VERSION) "$$chart"; \
		for values in "$$chart"/ci/*-values.yaml; do \
			[ -e "$$values" ] || continue; \
			echo "+ helm lint --strict --kube-version $(KUBE_VERSION) $$chart -f $$values"; \
			bin/helm lint --strict --kube-version $(KUBE_VERSION) "$$chart" -f "$$values"; \
		done; \
	done

.PHONY: kyverno-test
kyverno-test: bin/kyverno ## kyverno test policies/ with the Kyverno CLI, as committed (fails on a failing or missing test)
	bin/kyverno test policies/ --require-tests --remove-color

# Compares helm-docs' output on stdout with the committed README, so the check does not depend on git state. A table row
# ending in an empty cell is a value without a `# --` description.
.PHONY: docs-check
docs-check: bin/helm-docs ## Fail if a chart README.md is not what `make docs` generates, or a value has no description
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; status=0; \
	for chart in $(CHARTS); do \
		echo "+ helm-docs --dry-run --chart-to-generate $$chart | diff $$chart/README.md -"; \
		if ! bin/helm-docs $(HELM_DOCS_FLAGS) --dry-run --chart-to-generate "$$chart" >"$$tmp/README.md" 2>"$$tmp/log" \
			|| [ -s "$$tmp/log" ]; then \
			cat "$$tmp/log" >&2; echo "docs-check: helm-docs failed for $$chart" >&2; status=1; continue; \
		fi; \
		if ! diff -u "$$chart/README.md" "$$tmp/README.md"; then \
			echo "docs-check: $$chart/README.md is out of date: run 'make docs' and commit the result" >&2; status=1; \
		fi; \
		if grep -E '^\| .* \|  \|$$' "$$tmp/README.md" >&2; then \
			echo "docs-check: the values above have no '# --' description in $$chart/values.yaml" >&2; status=1; \
		fi; \
	done; \
	exit $$status

.PHONY: unit
unit: debian-packages ## go test $(PKGS) (default ./...)
	$(GO) test $(PKGS)

.PHONY: generate
generate: ## Regenerate generated code and CRDs (go generate ./...: the apps-ingress and VirtualIngress APIs, the VirtualHTTPRoute CRD)
	$(GO) generate ./...

# What `go generate ./...` writes: the charts' CRDs and the APIs' deepcopy code.
GENERATED := $(wildcard charts/*/files/crds/*.yaml) $(wildcard internal/*/api/*/zz_generated.*.go)

# Regenerates, compares with what was there, and puts back what was there, so the check neither depends on git state
# nor changes the tree.
.PHONY: generate-check
generate-check: ## Fail if a generated file (CRD, deepcopy) is not what `make generate` writes
	@tmp=$$(mktemp -d); status=0; \
	tar -cf "$$tmp/before.tar" $(GENERATED); \
	echo "+ go generate ./..."; \
	if ! $(GO) generate ./...; then status=1; \
	else \
		mkdir "$$tmp/before" && tar -xf "$$tmp/before.tar" -C "$$tmp/before"; \
		for f in $(GENERATED); do \
			if ! diff -u "$$tmp/before/$$f" "$$f"; then \
				echo "generate-check: $$f is not what 'make generate' writes: run it and commit the result" >&2; status=1; \
			fi; \
		done; \
		new=$$(ls charts/*/files/crds/*.yaml internal/*/api/*/zz_generated.*.go | grep -vxF -f <(printf '%s\n' $(GENERATED)) || true); \
		if [ -n "$$new" ]; then echo "generate-check: 'make generate' writes files that are not committed: $$new" >&2; rm -f $$new; status=1; fi; \
	fi; \
	tar -xf "$$tmp/before.tar"; rm -rf "$$tmp"; exit $$status

.PHONY: golden
golden: bin/policytest | $(JUNIT_DIR) ## Compare chart renders with tests/<product>/golden; fail if policies/ is stale
	bin/policytest golden --junit $(JUNIT_DIR)/golden.xml

.PHONY: golden-update
golden-update: sync-policies ## Regenerate policies/ and rewrite tests/<product>/golden
	bin/policytest golden --update

.PHONY: sync-policies
sync-policies: bin/policytest ## Regenerate policies/ from the chart
	bin/policytest sync-policies

.PHONY: policy-test
policy-test: bin/policytest | $(JUNIT_DIR) ## Run the kyverno test suites in policies/ in-process, with JUnit output
	bin/policytest kyverno policies --junit $(JUNIT_DIR)/kyverno.xml

.PHONY: parity
parity: bin/policytest | $(JUNIT_DIR) ## Run the fixtures through both policy engines (ClusterPolicy, CEL), with the default values and each ci/ case; fail where they differ
	bin/policytest compare --junit $(JUNIT_DIR)/parity.xml
	@for values in charts/virtual-ingress/ci/*-values.yaml; do \
		echo "+ bin/policytest compare --values $$values"; \
		bin/policytest compare --values "$$values" --junit "$(JUNIT_DIR)/parity-$$(basename "$$values" -values.yaml).xml"; \
	done

# Each product's end-to-end suite lives in tests/<product>/e2e behind the e2e build tag.
E2E_PRODUCTS := $(patsubst tests/%/e2e/,%,$(wildcard tests/*/e2e/))

.PHONY: e2e
e2e: $(addprefix e2e-,$(E2E_PRODUCTS)) ## Every product's end-to-end suite on real local control planes (one: make e2e-<product>)

.PHONY: $(addprefix e2e-,$(E2E_PRODUCTS))
$(addprefix e2e-,$(E2E_PRODUCTS)): e2e-%: debian-packages devcluster-binaries | $(JUNIT_DIR) ## One product's end-to-end suite: e2e-virtualingress, e2e-virtualservice, ...
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v ./tests/$*/e2e/ 2>&1 | tee $(JUNIT_DIR)/e2e-$*.log

e2e-appsingress: appsingress-binaries

# The node tier: the local cluster with a node (containerd, kubelet, kube-proxy, kube-scheduler, cluster DNS), every
# chart installed from charts/<chart> with `helm install --wait` and its image from `make images`, each product proven
# through its Pods, and the host left as found. One node per machine, so the packages run one at a time.
NODE_TIER_PKGS := ./internal/testkit/nodecanary/ ./internal/testkit/nodetier/ $(foreach p,$(E2E_PRODUCTS),./tests/$(p)/e2e/node/)

.PHONY: e2e-node
e2e-node: debian-packages devcluster-binaries appsingress-binaries images bin/cosign | $(JUNIT_DIR) ## The node tier: every chart on a real node (root on Linux)
	$(GO) test -tags node -p 1 -count=1 -timeout $(E2E_TIMEOUT) -v $(NODE_TIER_PKGS) 2>&1 | tee $(JUNIT_DIR)/e2e-node.log

# The apps-ingress end-to-end suite, bench and demo also run CoreDNS and MetalLB's controller, built from their pinned
# modules into bin/devcluster under the names tests/appsingress/{coredns,metallb} look for (a prerequisite of the targets
# that run them, so a cold build stays outside a suite's timeout).
COREDNS_VERSION := $(call modver,github.com/coredns/coredns,tools/devcluster/binaries/coredns/go.mod)
METALLB_VERSION := $(call modver,go.universe.tf/metallb,tools/devcluster/binaries/metallb/go.mod)

.PHONY: appsingress-binaries
appsingress-binaries: bin/devcluster/coredns-$(COREDNS_VERSION) bin/devcluster/metallb-controller-$(METALLB_VERSION) ## CoreDNS and MetalLB's controller for the apps-ingress tests

bin/devcluster/coredns-$(COREDNS_VERSION):
	@mkdir -p $(@D)
	cd tools/devcluster/binaries/coredns && CGO_ENABLED=0 GOWORK=off $(GO) build -o $(CURDIR)/$@.tmp github.com/coredns/coredns
	mv $@.tmp $@

bin/devcluster/metallb-controller-$(METALLB_VERSION):
	@mkdir -p $(@D)
	cd tools/devcluster/binaries/metallb && CGO_ENABLED=0 GOWORK=off $(GO) build -o $(CURDIR)/$@.tmp go.universe.tf/metallb/controller
	mv $@.tmp $@

# The local control plane (etcd, kube-apiserver, kube-controller-manager) and Kyverno's controllers, built into
# bin/devcluster by internal/testkit/devcluster, which keys each by the version its go.mod pins: a no-op once built.
# As root also Traefik, the ingress controller the node tier and the traffic bench send requests through, and every
# program of Kyverno's chart packed into images (bin/devcluster/images), which the node tier installs it from.
.PHONY: devcluster-binaries
devcluster-binaries: ## Build the local control plane, the node's components and Kyverno (as root Traefik and the images of Kyverno's chart, at the pinned release and the one before, too) into bin/devcluster (once per version)
	$(GO) run ./tools/devcluster build --with-kyverno --with-node $(if $(IS_ROOT),--with-multus --with-traefik --kyverno-on-node --kyverno-previous)

.PHONY: debian-packages
debian-packages: ## Install the Debian packages tests run (HAProxy, PostgreSQL; a node's as root), only those missing (apt-get as root, else sudo)
	@tools/host/debian-packages.sh $(DEBIAN_PACKAGES)

.PHONY: devcluster-test
devcluster-test: devcluster-binaries ## The devcluster's own integration test (garbage collection, Kyverno generate, restarts)
	$(GO) test -tags devcluster -count=1 -timeout $(E2E_TIMEOUT) ./internal/testkit/devcluster/

# The release tool against a real registry (Distribution over TLS, internal/testkit/registry): pushes, `helm pull` by
# oci://, digests, immutability, --dry-run, the air-gapped bundle, and signatures checked by `cosign verify`. The
# registry is built once into bin/devcluster.
.PHONY: release-test
release-test: bin/helm bin/cosign | $(JUNIT_DIR) ## tools/release against a real TLS registry (Distribution, built once into bin/devcluster)
	$(GO) test -tags release -count=1 -v ./internal/testkit/registry/ ./tools/release/ 2>&1 | tee $(JUNIT_DIR)/release.log

##@ Use
##@ Use

.PHONY: demo-virtualingress
demo-virtualingress: debian-packages devcluster-binaries ## Start a local cluster with Kyverno (and a node as root), helm install the chart, show the coder example following a recreated Service; left running for demo-down
	$(GO) run ./tools/demo-virtualingress

.PHONY: demo-virtualservice
demo-virtualservice: devcluster-binaries ## virtualservice-operator on a local control plane: a developer's Service adding a header-matched route to the production VirtualService, and taking it away
	$(GO) run ./tools/demo-virtualservice

.PHONY: demo-appsingress
demo-appsingress: debian-packages devcluster-binaries appsingress-binaries ## apps-ingress-operator on two local clusters: an AppsIngress going Ready, dig from both views, TLS through the proxy
	$(GO) run ./tools/demo-appsingress

.PHONY: demo-ssvirt
demo-ssvirt: devcluster-binaries ## ssvirt-api on SQLite and a local control plane: create an organization and a VDC with curl, show the namespace and quota
	$(GO) run ./tools/demo-ssvirt

.PHONY: demo-down
demo-down: ## Stop and remove what demo-virtualingress left running (the other demos stop when they end)
	$(GO) run ./tools/devcluster down --dir .devcluster/demo

.PHONY: bench
bench: debian-packages devcluster-binaries appsingress-binaries ## Every product's benchmark (tests/<product>/bench); writes _output/bench/<product>.json
	$(GO) run ./tests/virtualingress/bench --out _output/bench/virtualingress.json
	$(if $(IS_ROOT),$(GO) run ./tests/virtualingress/bench/traffic --out _output/bench/virtualingress-traffic.json,@echo "make bench: the traffic bench (tests/virtualingress/bench/traffic) was not run: it needs root")
	$(GO) run ./tests/virtualservice/bench --out _output/bench/virtualservice.json
	$(GO) run ./tests/ssvirt/bench --out _output/bench/ssvirt.json
	$(GO) run ./tests/appsingress/bench --out _output/bench/appsingress.json
	$(if $(IS_ROOT),$(GO) run ./tests/appsingress/bench/node --out _output/bench/appsingress-node.json,@echo "make bench: the apps-ingress node bench (tests/appsingress/bench/node) was not run: it needs root")

.PHONY: preview
preview: bin/policytest ## Show what the policies make of fixtures/examples (PREVIEW_VIRTUALINGRESSES, PREVIEW_SERVICES)
	bin/policytest preview -f $(PREVIEW_VIRTUALINGRESSES) -s $(PREVIEW_SERVICES)

.PHONY: docs
docs: bin/helm-docs ## Regenerate every chart's README.md from its README.md.gotmpl and values.yaml (helm-docs)
	@echo "+ bin/helm-docs $(HELM_DOCS_FLAGS)"
	@if ! log=$$(bin/helm-docs $(HELM_DOCS_FLAGS) 2>&1) || [ -n "$$log" ]; then \
		echo "$$log" >&2; echo "docs: helm-docs failed; a README may not have been written" >&2; exit 1; \
	fi

.PHONY: build
build: bin/helm ## helm package every chart (CHARTS) into dist/
	@mkdir -p $(DIST)
	@for chart in $(CHARTS); do \
		echo "+ helm package $$chart -d $(DIST)"; \
		bin/helm package "$$chart" -d $(DIST); \
	done

# One OCI image per controller binary: <binary>=<chart whose appVersion is its version>. The revision comes from git
# (both are image labels).
IMAGES := virtualservice-operator=virtualservice-operator virtual-ingress-controller=virtual-ingress \
	apps-ingress-operator=apps-ingress-operator ssvirt-api=ssvirt
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
app_version = $(shell awk '$$1 == "appVersion:" { gsub(/"/, "", $$2); print $$2 }' charts/$(1)/Chart.yaml)

.PHONY: images
images: ## Every controller's OCI image for linux/amd64 + linux/arm64 (no Docker) into _output/images/<binary> (version: VERSION, else the chart's appVersion); prints digests
	@set -e; $(foreach image,$(IMAGES),\
		$(GO) run ./tools/images --package ./cmd/$(word 1,$(subst =, ,$(image))) --name $(word 1,$(subst =, ,$(image))) \
			--out _output/images/$(word 1,$(subst =, ,$(image))) --version $(or $(VERSION),$(call app_version,$(word 2,$(subst =, ,$(image))))) \
			--revision '$(IMAGE_REVISION)';)

# Where `make release` publishes: images as $(REGISTRY)/<binary>:$(VERSION), charts as oci://$(REGISTRY)/charts/<chart>
# (version $(VERSION)). The default is the registry every chart's values.yaml names, so the charts in the tree render
# the images a default release publishes; a release elsewhere packages charts that name its own registry.
REGISTRY ?= ghcr.io/virtual-ingress
# Extra flags for tools/release: --dry-run, --overwrite-prerelease, --oci-layout DIR, --ca-file FILE, --sign-key KEY.
RELEASE_FLAGS ?=

.PHONY: release
release: ## Publish the images and charts of this commit: make release REGISTRY=host/path VERSION=1.2.3 [RELEASE_FLAGS=--dry-run]
	@[ -n "$(VERSION)" ] || { echo "make release: set VERSION (a semantic version, e.g. VERSION=1.2.3)" >&2; exit 1; }
	$(MAKE) images VERSION=$(VERSION)
	$(GO) run ./tools/release --registry $(REGISTRY) --version $(VERSION) --image '$(IMAGES)' $(RELEASE_FLAGS)

##@ Tools

.PHONY: tools
tools: bin/helm bin/kyverno bin/golangci-lint bin/helm-docs bin/cosign bin/policytest bin/moon ## Build every tool into bin/

.PHONY: moon
moon: bin/moon ## Install moon (@moonrepo/cli, pinned by package-lock.json) from npm; bin/moon links to it

# moon is the one tool that comes from npm: `npm ci` installs exactly what package-lock.json pins. The link is older
# than a changed lockfile, and dangles when node_modules/ is gone; either way make reinstalls.
bin/moon: package-lock.json
	npm ci --no-audit --no-fund
	@mkdir -p $(@D)
	ln -sfn ../node_modules/.bin/moon $@

bin/helm: $(HELM_STAMP) ## helm CLI (helm.sh/helm/v3 from go.mod, default kube version baked in)
	$(GO) build -ldflags '$(HELM_LDFLAGS)' -o $@ helm.sh/helm/v3/cmd/helm

bin/kyverno: $(KYVERNO_STAMP) ## kyverno CLI (tool directive in go.mod)
	$(GO) build -o $@ github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno

bin/golangci-lint: $(GOLANGCI_LINT_STAMP) ## golangci-lint (tool directive in tools/golangci-lint/go.mod)
	cd tools/golangci-lint && $(GO) build -o ../../$@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# The version is stamped as helm-docs' release builds do: it names the helm-docs release in each README's footer.
bin/helm-docs: $(HELM_DOCS_STAMP) ## helm-docs, chart READMEs from values.yaml (tool directive in tools/helm-docs/go.mod)
	cd tools/helm-docs && $(GO) build -ldflags '-X main.version=$(patsubst v%,%,$(HELM_DOCS_VERSION))' -o ../../$@ \
		github.com/norwoodj/helm-docs/cmd/helm-docs

# cosign verifies the release's signatures as users do. v2.2.4: later versions need drjosh.dev/zzglob, which the module
# proxy this project builds from refuses (403). The version is stamped as cosign's release builds do.
bin/cosign: $(COSIGN_STAMP) ## cosign, to verify release signatures (tool directive in tools/cosign/go.mod)
	cd tools/cosign && $(GO) build -ldflags '-X sigs.k8s.io/release-utils/version.gitVersion=$(COSIGN_VERSION)' -o ../../$@ \
		github.com/sigstore/cosign/v2/cmd/cosign

bin/policytest: $(POLICYTEST_SRCS) ## The project's chart/policy checker (./tools/policytest)
	$(GO) build -o $@ ./tools/policytest

# A stamp names the version; making it drops the tool's older stamps, so the binary above is rebuilt.
$(STAMPS)/%:
	@mkdir -p $(STAMPS)
	@rm -f $(STAMPS)/$(firstword $(subst -, ,$*))-*
	@touch $@

$(JUNIT_DIR):
	@mkdir -p $@

##@ Clean

.PHONY: clean
clean: ## Remove bin/, dist/ and test output
	rm -rf bin $(DIST) _output

.PHONY: clean-tools
clean-tools: ## Remove the built tools only (next use rebuilds them)
	rm -rf bin
