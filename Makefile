# gpuops.dlserver — the README's commands live here.
#
#   make lab        set up what is missing, start the lab, run playbooks/site.yml, print a summary
#   make lab-down   remove the lab nodes (images stay cached)
#   make test       every test: yamllint, ansible-lint, ansible-test sanity, unit tests (sanity and
#                   unit on the oldest and the newest tested ansible-core), the publishing checks,
#                   molecule; ends with the seconds each stage took
#   make publish-check   galaxy-importer, antsibull-docs lint, ansible-builder on the built tarball
#   make ee-context      the execution environment's build context with the built tarball (.cache/ee)
#   make role-readmes    regenerate roles/<role>/README.md from docs/roles and argument_specs
#   make vendor-facts    regenerate docs/vendor-facts.md from the vendor tables
#   make release VERSION=x.y.z   cut a release (docs/release.md)
#
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
# The publishing tools (galaxy-importer pins attrs below what the test tools need): a venv of their own.
PUBLISH_VENV ?= $(CURDIR)/.cache/publish-venv
# The newest tested ansible-core (requirements/newest.txt) in a venv of its own: its controller needs
# Python 3.12 or newer. NEWEST_PYTHON is found on PATH or in pyenv (tools/find_python.sh says how to get one).
NEWEST_VENV ?= $(CURDIR)/.cache/venv-newest
NEWEST_PYTHON ?= $(shell tools/find_python.sh 3.12)
COLLECTIONS := $(CURDIR)/.cache/collections
LINK := $(COLLECTIONS)/ansible_collections/gpuops/dlserver
LAB := $(PYTHON) lab/lab.py
# One checkout's molecule run at a time on a machine: scenarios share the lab network and the
# mirror, which belong to a checkout.
# The lock is machine-wide (every checkout queues on it) and lives under /run, where only root
# creates files: a lock file that is not a regular file owned by root is refused (lab.py molecule-lock).
MOLECULE_LOCK ?= /run/gpuops-molecule.lock
# `make test` / `make molecule` hold that lock once and run the scenarios in LANES lanes side by side (one
# scenario leaves part of the two CPUs idle): tools/molecule_lanes.py queues them, each lane takes the next.
LANES ?= 2
# The whole-stack scenario runs on the newest tested ansible-core too (the matrix's other end,
# molecule-one's NAME@newest); every other stage of molecule runs on the oldest (the main venv).
NEWEST_SCENARIOS ?= nvidia_driver@newest
SCENARIOS ?= $(sort $(patsubst molecule/%/molecule.yml,%,$(wildcard molecule/*/molecule.yml))) $(NEWEST_SCENARIOS)

export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export PATH := $(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help setup setup-newest sanity-newest unit-newest lab lab-down lab-status test times lint yamllint ansible-lint sanity unit target-python promtool molecule bench-fleet bench-python-stack \
	molecule-prep molecule-services mirror-doubles molecule-lanes molecule-one lab-images build publish-setup publish-check ee-context role-readmes vendor-facts release volcano-render

help:
	@sed -n '2,12p' Makefile | sed 's/^# \{0,1\}//'

## setup: virtualenv with pinned requirements, and the collection linked where ansible looks; the
## Debian packages the unit tests use (TEST_DEBS: chromium opens gpu_validate's HTML report headless,
## fio is the data check's reader), installed where missing (as root; else the tests that need them skip)
TEST_DEBS ?= chromium fio
setup: $(VENV)/.stamp $(LINK) test-debs

.PHONY: test-debs
test-debs:
	@missing=""; for deb in $(TEST_DEBS); do command -v $$deb >/dev/null 2>&1 || missing="$$missing $$deb"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "setup: installing Debian's$$missing (the unit tests' browser and fio)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "setup: Debian's$$missing missing and not root: the tests that need them skip" >&2; fi; \
	fi

$(VENV)/.stamp: requirements/controller.txt requirements/test.txt requirements/constraints.txt
	@if ! $(PYTHON) -c 'import ensurepip, venv' 2>/dev/null; then \
	  echo "setup: $(PYTHON) has no venv/ensurepip; installing Debian's python3-venv"; \
	  [ "$$(id -u)" = 0 ] || { echo "setup: run as root or install python3-venv yourself" >&2; exit 2; }; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; \
	fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements/test.txt -c requirements/constraints.txt
	touch $@

## setup-newest: the newest tested ansible-core (requirements/newest.txt) in $(NEWEST_VENV), on Python 3.12+
setup-newest: $(NEWEST_VENV)/.stamp $(LINK)

$(NEWEST_VENV)/.stamp: requirements/newest.txt
	@[ -n "$(NEWEST_PYTHON)" ] || { tools/find_python.sh 3.12 >/dev/null; exit 2; }
	$(NEWEST_PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/pip install -q -r requirements/newest.txt
	touch $@

$(LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

## lab: converge the lab nodes with playbooks/site.yml; a second run changes nothing and says so
lab: setup
	$(LAB) up
	$(SUBMAKE) mirror-doubles >/dev/null
	ANSIBLE_CALLBACKS_ENABLED=gpuops.dlserver.fleet_summary,gpuops.dlserver.preload \
	  $(BIN)/ansible-playbook -i inventories/lab playbooks/site.yml $(ANSIBLE_ARGS)

lab-down:
	$(LAB) down

lab-status:
	$(LAB) status

lab-images:
	$(LAB) images

## test: what .ci/run runs. Every stage runs even when an earlier one failed, and a timing
## table (seconds per stage: setup, lint, sanity, unit, lab preparation, each molecule
## scenario, and the wall clock) ends the output whatever happened; the exit status is 1 when
## any stage failed. The lab's host packages come first (`lab.py engine`: apt may install
## docker.io and debootstrap); then the static stages run in the background beside the node
## images' build (downloads and dpkg in a chroot, much of it waiting) and the molecule lanes.
TIMES := $(CURDIR)/.cache/test-times.tsv
STAGE_LOGS := $(CURDIR)/.cache/test-logs
STAGE = s=$$(date +%s); n=$$(( n + 1 )); log=$(STAGE_LOGS)/$$p$$n.log; \
	if { $(2); } 2>&1 | tee $$log; then r=passed; else r=FAILED; status=1; fi; \
	printf '%s\t%s\t%s\t%s\n' "$(1)" "$$(( $$(date +%s) - s ))" "$$r" "$$log" >> $(TIMES)
SUBMAKE = $(MAKE) --no-print-directory

test:
	@mkdir -p $(dir $(TIMES)); if [ -s $(TIMES) ]; then cp $(TIMES) $(TIMES).prev; fi; : > $(TIMES); \
	rm -rf $(STAGE_LOGS); mkdir -p $(STAGE_LOGS); status=0; n=0; \
	trap '$(MAKE) --no-print-directory times' EXIT; \
	start=$$(date +%s); p=; \
	$(call STAGE,setup,$(SUBMAKE) setup); \
	if [ $$status -ne 0 ]; then exit 1; fi; \
	$(call STAGE,setup (newest ansible-core venv),$(SUBMAKE) setup-newest); \
	$(call STAGE,lab engine (host packages$(,) dockerd),$(LAB) engine); \
	echo "make test: the static stages (lint to promtool) run beside the node images' build and the" \
	  "molecule scenarios; their output is in $(STAGE_LOGS)/static-*.log"; \
	( p=static-; n=0; status=0; \
	  $(call STAGE,lint,$(SUBMAKE) lint); \
	  $(call STAGE,sanity,$(SUBMAKE) sanity); \
	  $(call STAGE,unit,$(SUBMAKE) unit); \
	  $(call STAGE,sanity (newest ansible-core),$(SUBMAKE) sanity-newest); \
	  $(call STAGE,unit (newest ansible-core),$(SUBMAKE) unit-newest); \
	  $(call STAGE,target Python 3.8 (vermin),$(SUBMAKE) target-python); \
	  $(call STAGE,publish (galaxy-importer$(,) antsibull-docs$(,) ansible-builder),$(SUBMAKE) publish-check); \
	  $(call STAGE,volcano render+validate,$(SUBMAKE) volcano-render); \
	  $(call STAGE,promtool and dashboard schema,$(SUBMAKE) promtool); \
	  exit $$status ) >/dev/null 2>&1 & static=$$!; \
	$(call STAGE,lab (cache$(,) images),$(SUBMAKE) molecule-prep); \
	$(SUBMAKE) molecule-lanes || status=1; \
	wait $$static || status=1; \
	printf '%s\t%s\t%s\t%s\n' "wall clock (static stages beside molecule)" "$$(( $$(date +%s) - start ))" wall "" >> $(TIMES); \
	exit $$status

, := ,
times:
	@[ -s $(TIMES) ] || exit 0; \
	echo; echo "make test: seconds per stage"; \
	awk -F'\t' '$$3 != "wall" { printf "  %-44s %6d  %s\n", $$1, $$2, $$3; t += $$2 } \
	  $$3 == "wall" { w = $$2; wn = $$1 } \
	  END { printf "  %-44s %6d  (%.1f min)\n", "sum of the stages", t, t / 60; \
	        if (wn != "") printf "  %-44s %6d  (%.1f min)\n", wn, w, w / 60 }' $(TIMES); \
	if grep -qh '^=== steps of' $(STAGE_LOGS)/*.log 2>/dev/null; then \
	  echo; echo "make test: seconds per molecule step (tools/molecule_steps.py)"; \
	  grep -h '^=== steps of' $(STAGE_LOGS)/*.log | sed 's/^=== steps of /  /'; fi; \
	awk -F'\t' '$$3 == "FAILED" && $$4 != "" { print $$1 "\t" $$4 }' $(TIMES) | \
	  while IFS=$$'\t' read -r name log; do \
	    echo; echo "why '$$name' failed (the last error lines of $$log):"; \
	    sed 's/\x1b\[[0-9;]*m//g' "$$log" | grep -E 'fatal:|FAILED|ERROR|CRITICAL|Error|error:|LabError|lab:|assert' \
	      | grep -v '^\s*$$' | tail -n 25 | cut -c1-400 | sed 's/^/  | /'; \
	  done

lint: yamllint ansible-lint

yamllint: setup
	$(BIN)/yamllint -s .

ansible-lint: setup
	$(BIN)/ansible-lint --profile production --offline

## volcano-render: render every object the volcano role applies and validate it (Kubernetes
## OpenAPI schemas of each supported version; Volcano's required fields and enums)
volcano-render: setup
	$(BIN)/python tests/render/volcano_validate.py

sanity: setup
	VENV=$(VENV) tests/sanity/run.sh

## unit: on both CPUs (pytest-xdist, one worker per test file: module fixtures such as the volcano
## converge's fake cluster are built once). A short --basetemp: under a worker's longer default
## tmp path gpg cannot create its agent socket (the socket path limit), and the gpg tests fail.
## The 15 slowest tests are listed at the end (where the unit stage's time goes).
unit: setup
	@bt=$$(mktemp -d /tmp/ut.XXXXXX); trap 'rm -rf "$$bt"' EXIT; \
	echo "$(BIN)/python -m pytest tests/unit -q -p no:cacheprovider -n 2 --dist loadfile --durations=15 --basetemp=$$bt"; \
	$(BIN)/python -m pytest tests/unit -q -p no:cacheprovider -n 2 --dist loadfile --durations=15 --basetemp=$$bt

## sanity-newest, unit-newest: the same two stages on the newest tested ansible-core (the matrix's
## other end; requires_ansible in meta/runtime.yml states the tested range)
sanity-newest: setup-newest
	VENV=$(NEWEST_VENV) SANITY_PYTHON=$$($(NEWEST_VENV)/bin/python -c "import sys; print(\"%d.%d\" % sys.version_info[:2])") SANITY_WORKDIR=$${TMPDIR:-/tmp}/gpuops-dlserver-sanity-newest-$$(printf %s "$(CURDIR)" | cksum | cut -d" " -f1) \
	  tests/sanity/run.sh

unit-newest: setup-newest
	@bt=$$(mktemp -d /tmp/ut.XXXXXX); trap 'rm -rf "$$bt"' EXIT; \
	echo "$(NEWEST_VENV)/bin/python -m pytest tests/unit -q -p no:cacheprovider -n 2 --dist loadfile --basetemp=$$bt"; \
	$(NEWEST_VENV)/bin/python -m pytest tests/unit -q -p no:cacheprovider -n 2 --dist loadfile --basetemp=$$bt

## target-python: the modules and every module_utils file they import run on the managed nodes'
## oldest Python, 3.8 (vermin; tools/target_python.py finds the files from the modules' imports)
target-python: setup
	$(BIN)/python tools/target_python.py

## promtool: Debian's promtool (unpacked into .cache, no service started) checks the generated
## prometheus.yml, the rules, the rule unit tests (every alert fires and stays silent), the GPU
## textfile of every fixture host and the dashboard's queries; the dashboard is checked against
## Grafana's schema (@grafana/schema types, TypeScript compiler, from npm).
promtool: setup
	PYTHON=$(BIN)/python tests/promtool/run.sh
	tests/dashboard/check_schema.sh

molecule: molecule-lanes

## molecule-lanes: every scenario of SCENARIOS under the machine-wide molecule lock, in LANES lanes
## side by side: tools/molecule_lanes.py queues them longest first and each lane takes the next one
## when it comes free (LANES=1 runs them one after the other).
## Each scenario is a stage of `make test`'s table and log ($(STAGE_LOGS)/lane<N>-<M>.log); the
## output of a lane is prefixed with "[lane N]". The mirror and package cache are started and
## filled once before the lanes (molecule-services) and stopped after the last one.
molecule-lanes: setup $(if $(findstring @newest,$(SCENARIOS)),setup-newest) molecule-prep
	@mkdir -p $(STAGE_LOGS); status=0; p=molecule-; n=0; \
	$(LAB) molecule-lock $(MOLECULE_LOCK); exec 8>>$(MOLECULE_LOCK); flock 8; \
	$(call STAGE,molecule services (mirror served and filled),$(SUBMAKE) molecule-services); \
	queue=$(STAGE_LOGS)/molecule-queue; \
	units=$$($(BIN)/python tools/molecule_lanes.py --queue $$queue --times $(TIMES).prev $(SCENARIOS)); \
	echo "make test: the molecule scenarios longest first; each of $(LANES) lane(s) side by side takes the next" \
	  "when it comes free (tools/molecule_lanes.py, queue $$queue):"; \
	echo "$$units" | awk '{ print "  " NR ". " $$0 }'; \
	export GPUOPS_MOLECULE_LOCK_HELD=1 GPUOPS_LAB_KEEP_SERVICES=1; lane_pids=; \
	for l in $$(seq $(LANES)); do \
	  ( p=lane$$l-; n=0; status=0; \
	    while :; do \
	      unit=$$($(BIN)/python tools/molecule_lanes.py --take $$queue) || { echo "cannot take from $$queue"; exit 1; }; \
	      [ -n "$$unit" ] || break; \
	      for sc in $$unit; do $(call STAGE,molecule $$sc,$(SUBMAKE) molecule-one SCENARIO=$$sc); done; \
	    done; \
	    exit $$status ) 2>&1 | sed -u "s/^/[lane $$l] /" & lane_pids="$$lane_pids $$!"; \
	done; \
	for pid in $$lane_pids; do wait $$pid || status=1; done; \
	if [ -s $$queue ]; then echo "make test: never run (no lane took them): $$(tr '\n' ' ' < $$queue)"; status=1; fi; \
	$(LAB) mirror-stop || true; exec 8>&-; \
	exit $$status

# The Docker engine, the lab network, the package cache and the node images (each scenario's
# create step would make them too; done once here so that their time is its own line). The
# mirror is claimed under the molecule lock: by molecule-services for the lanes, by a scenario's
# create step when it runs alone (molecule-one).
molecule-prep: setup
	$(LAB) images

# What the lanes share, made before them under the molecule lock: the artifact mirror served,
# with every double and wheel index the scenarios read (each scenario's prepare runs the same
# builders again, as a no-op: no lane writes what another reads). Stopped after the last lane.
molecule-services: setup
	$(LAB) mirror
	$(SUBMAKE) mirror-doubles
	$(BIN)/python tests/doubles/build_wheel_mirror.py --mirror-dir .cache/mirror

# The repository doubles and node_exporter's release double in the lab mirror (`make lab` and
# the molecule lanes; each builder is a no-op when its recipe is unchanged).
mirror-doubles: setup
	$(BIN)/python tests/doubles/build_repo.py --mirror-dir .cache/mirror
	$(BIN)/python tests/doubles/build_node_exporter_release.py --mirror-dir .cache/mirror

# One scenario under the machine-wide lock; its time is counted from when the lock is held, and
# its log ends with the seconds of each molecule step (tools/molecule_steps.py).
# SCENARIO=NAME@newest runs the scenario NAME with the newest tested ansible-core: molecule and
# ansible-playbook of $(NEWEST_VENV) first on PATH, an ephemeral directory of its own
# (.cache/molecule-newest/NAME, apart from the oldest end's run of the same scenario), and every
# ansible-playbook of the run (molecule's and the ones the scenario runs itself) logging to
# .cache/molecule-newest/NAME.ansible.log (ANSIBLE_LOG_PATH), which tools/deprecations.py then
# reads: a deprecation warning fails the scenario (its allow-list: tests/deprecations_allowed.yml).
# The same scenario on both ends uses the same node names: tools/molecule_lanes.py keeps the two
# in one lane.
SCENARIO_NAME = $(firstword $(subst @, ,$(SCENARIO)))
SCENARIO_END = $(word 2,$(subst @, ,$(SCENARIO)))
NEWEST_EPH = $(CURDIR)/.cache/molecule-newest

molecule-one: setup $(if $(filter newest,$(SCENARIO_END)),setup-newest)
	@echo "=== molecule scenario $(SCENARIO)"; queued=$$(date +%s); \
	case "$(SCENARIO_END)" in \
	  "") mbin=$(BIN) ;; \
	  newest) mbin=$(NEWEST_VENV)/bin; export PATH=$(NEWEST_VENV)/bin:$$PATH; \
	    export MOLECULE_EPHEMERAL_DIRECTORY=$(NEWEST_EPH)/$(SCENARIO_NAME) ANSIBLE_LOG_PATH=$(NEWEST_EPH)/$(SCENARIO_NAME).ansible.log; \
	    mkdir -p $(NEWEST_EPH); : > $(NEWEST_EPH)/$(SCENARIO_NAME).ansible.log; \
	    echo "=== on $$($$mbin/ansible --version 2>/dev/null | sed -n 1p); every ansible-playbook logs to $$ANSIBLE_LOG_PATH" ;; \
	  *) echo "molecule-one: not an ansible-core end: $(SCENARIO_END) (SCENARIO=NAME or NAME@newest)" >&2; exit 2 ;; \
	esac; \
	if [ -z "$${GPUOPS_MOLECULE_LOCK_HELD:-}" ]; then \
	  $(LAB) molecule-lock $(MOLECULE_LOCK); exec 9>>$(MOLECULE_LOCK); flock 9; fi; start=$$(date +%s); \
	if [ $$start -gt $$queued ]; then echo "=== waited $$(( start - queued )) s for $(MOLECULE_LOCK)"; fi; \
	rc=0; $(BIN)/python tools/molecule_steps.py $(SCENARIO) $$mbin/molecule test -s $(SCENARIO_NAME) || rc=$$?; \
	if [ -n "$(SCENARIO_END)" ]; then \
	  $(BIN)/python tools/deprecations.py --allow tests/deprecations_allowed.yml $$ANSIBLE_LOG_PATH || rc=1; fi; \
	if [ $$rc -eq 0 ]; then echo "=== $(SCENARIO) passed in $$(( $$(date +%s) - start )) s"; \
	else echo "=== $(SCENARIO) FAILED after $$(( $$(date +%s) - start )) s"; exit 1; fi

## bench-fleet: time a no-op site.yml re-run over 1/4/8 SSH nodes (recommended ansible.cfg, Ansible's defaults,
## Mitogen). It uses the lab's network and mirror, so it queues on the molecule lock like a scenario.
## ANSIBLE_END=newest runs it on the newest tested ansible-core ($(NEWEST_VENV); Mitogen is not installed
## there, so its configuration is left out); the results record the ansible-core that ran them.
ANSIBLE_END ?=
BENCH_BIN = $(if $(filter newest,$(ANSIBLE_END)),$(NEWEST_VENV)/bin,$(BIN))

bench-fleet: setup $(if $(filter newest,$(ANSIBLE_END)),setup-newest)
	@case "$(ANSIBLE_END)" in ""|newest) ;; *) echo "bench-fleet: ANSIBLE_END is empty (the oldest end) or newest, not $(ANSIBLE_END)" >&2; exit 2 ;; esac; \
	$(LAB) molecule-lock $(MOLECULE_LOCK); exec 9>>$(MOLECULE_LOCK); flock 9; \
	PATH=$(BENCH_BIN):$$PATH $(BENCH_BIN)/python bench/fleet_bench.py $(BENCH_ARGS)

## bench-python-stack: build the torch environment with uv and with pip (cold, no-op, warm cache, verification)
bench-python-stack: setup
	$(BIN)/python bench/python_stack_bench.py $(BENCH_ARGS)

## build: the collection tarball
build: setup
	$(BIN)/ansible-galaxy collection build --force --output-path .cache/dist .

## publish-check: on the built tarball, galaxy-importer (.config/galaxy-importer.cfg: no containers,
## ansible-lint offline, ansible-doc, changelog), antsibull-docs lint-collection-docs --plugin-docs,
## ansible-builder introspect + create; fails on any error or warning (tools/publish_check.py)
publish-setup: $(PUBLISH_VENV)/.stamp

$(PUBLISH_VENV)/.stamp: requirements/publish.txt
	$(PYTHON) -m venv $(PUBLISH_VENV)
	$(PUBLISH_VENV)/bin/pip install -q -r requirements/publish.txt
	touch $@

publish-check: setup publish-setup
	VENV=$(VENV) PUBLISH_VENV=$(PUBLISH_VENV) $(BIN)/python tools/publish_check.py $(PUBLISH_ARGS)

## ee-context: the execution environment's build context in .cache/ee/context, from the built tarball
## alone: its own definition, which installs it (tools/ee_context.py; then: podman build -t gpuops-dlserver-ee:<version> .cache/ee/context)
ee-context: build publish-setup
	$(BIN)/python tools/ee_context.py --builder $(PUBLISH_VENV)/bin/ansible-builder

## role-readmes: roles/<role>/README.md from docs/roles/<role>.md + meta/argument_specs.yml
role-readmes: setup
	$(BIN)/python tools/role_readme.py

## vendor-facts: docs/vendor-facts.md from the vendor tables in plugins/module_utils (rows, sources, read dates)
vendor-facts: setup
	$(BIN)/python tools/vendor_facts.py

## release: VERSION=x.y.z — version bump, CHANGELOG.rst from the fragments, READMEs, tarball, import check
release: setup publish-setup
	@[ -n "$(VERSION)" ] || { echo "release: say which version: make release VERSION=x.y.z" >&2; exit 2; }
	$(BIN)/python tools/release.py --version $(VERSION) --changelog $(PUBLISH_VENV)/bin/antsibull-changelog
	$(BIN)/python tools/role_readme.py
	$(BIN)/ansible-galaxy collection build --force --output-path .cache/dist .
	VENV=$(VENV) PUBLISH_VENV=$(PUBLISH_VENV) $(BIN)/python tools/publish_check.py \
	  --tarball .cache/dist/gpuops-dlserver-$(VERSION).tar.gz $(PUBLISH_ARGS)
