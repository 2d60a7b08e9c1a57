# The two commands a fresh machine needs are `make demo` and `make test`; both set it up first.
GO ?= go
BIN := bin/persistlab
# The commit a build comes from, recorded in every results file (these machines build with
# -buildvcs=false, which stamps none); -dirty when tracked files differ from it.
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null)$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)

.PHONY: setup build demo test bench lab-bench clean

# persistlab finds programs and examples beside its executable, never in the working directory:
# binaries of go test and go run live in a temporary directory, and find the checkout's here.
export PERSISTLAB_TOOLS ?= $(CURDIR)/.tools/bin:$(CURDIR)/.venv/bin
export PERSISTLAB_EXAMPLES ?= $(CURDIR)/examples

# What scripts/setup installs (its header lists each need's programs): all by default, which
# test and bench use; `make demo SETUP_FOR=rails` installs the demo's alone (no MariaDB, fio or
# Chromium).
SETUP_FOR ?= all
setup:
	scripts/setup --for $(SETUP_FOR)

build:
	$(GO) build -ldflags "-X persistlab/internal/sysinfo.buildCommit=$(COMMIT)" -o $(BIN) ./cmd/persistlab

# Seed 000's experiment with its own Rails app and k6 script, quick variant, on the embedded lab:
# the answer first, the page with every table and chart, and what to try next. The software of the
# seed's day only: the other releases are named variants of the full plan.
demo: setup build
	@$(BIN) run cloudrun-sqlite-rails --quick --backend gcsfuse,litestream,local --force --brief --out out/demo.json --html out/demo.html
	@echo "next: bin/persistlab report out/demo.json            # every table behind the answer"
	@echo "      bin/persistlab run cloudrun-sqlite-rails-crash --quick   # what a crash loses on each"
	@echo "      bin/persistlab run cloudrun-sqlite-rails           # the full plan as the seed ran it: 3 runs of 120 s per row"
	@echo "      your own app: README.md, 'Your own app'"

test: setup
	$(GO) mod tidy -diff
	$(GO) vet ./...
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	.tools/bin/staticcheck ./...
	# One package at a time: several packages start real servers (MariaDB, gcsfuse, fio, the volume
	# emulator), and two cores shared among them make a run slow, though no test asserts a speed
	# (the CPU slowdown tests assert ratios within one run, with bounds a busy core stays inside).
	# cmd/persistlab's end-to-end tests (real runs, an advise, calibrations) take over go test's
	# default 10 minutes beside a busy core: the bound is raised, not the tests cut.
	$(GO) test -count=1 -p 1 -timeout 30m ./...

# The load driver against wrk and k6 on the same endpoints, and the fio workload against fio run
# by hand with the same job (benchmarks, not tests). Each figure with a goal (issue 23) is also
# gathered, and printed at the end in one table.
GOALS := $(CURDIR)/out/bench-goals.tsv
bench lab-bench: export PERSISTLAB_BENCH_GOALS := $(GOALS)
bench: setup build
	mkdir -p out && rm -f $(GOALS)
	$(GO) run ./bench/driver --persistlab $(BIN)
	$(GO) run ./bench/fio --persistlab $(BIN)
	$(GO) run ./bench/lab
	$(GO) run ./bench/volume
	$(BIN) lab volumes
	$(GO) run ./bench/instance
	$(GO) run ./bench/shards --persistlab $(BIN)
	$(GO) run ./bench/advise --persistlab $(BIN)
	$(GO) run ./bench/advise --persistlab $(BIN) --app git
	$(GO) run ./bench/goals $(GOALS)

# The lab's own ceilings, model off: the bucket (JSON API and a gcsfuse mount, each way) and the
# emulated volume beside a plain loop device and this machine's disk (benchmarks, not tests).
lab-bench: setup build
	mkdir -p out && rm -f $(GOALS)
	$(GO) run ./bench/lab
	$(GO) run ./bench/volume
	$(BIN) lab volumes
	$(GO) run ./bench/goals $(GOALS)

clean:
	rm -rf bin out
