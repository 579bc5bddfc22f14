# Thin front door; the build is CMake + Ninja in build/.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: deps configure build run test test-asan soak bench clean format

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target fulcrum
	$(BUILD_DIR)/fulcrum run configs/ipv4-router.click --port gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt --port net_null0,no-rx=1 --packets 50000000

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz-smoke

# The same tests on an AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/).
# Warnings are not errors there: GCC 12's flow warnings report false positives under -fsanitize.
# The sanitizers' options are compiled in (src/core/sanitizer_options.cc), so ctest run by hand
# in build-asan behaves the same.
test-asan: deps
	@test -f build-asan/build.ninja || cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFULCRUM_SANITIZE=ON -DFULCRUM_WERROR=OFF
	@cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# A bounded soak before releases: the router, 2 workers, SOAK_SECONDS (600); flat RSS and the
# packet balance are asserted (tools/soak.py).
SOAK_SECONDS ?= 600
soak: build
	python3 tools/soak.py --seconds $(SOAK_SECONDS)

# The figures as JSON, then one plot per series next to it (tools/plot_bench.py, PNG).
bench: build
	@scripts/hugepages.sh
	$(BUILD_DIR)/fulcrum bench --out $(BUILD_DIR)/bench.json
	tools/plot_bench.py $(BUILD_DIR)/bench.json $(BUILD_DIR)/bench-plots

format:
	@find src elements tests bench -name '*.cc' -o -name '*.hh' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

# Fuzzing (fuzz/, docs/reliability.md): libFuzzer targets on a clang-16 ASan + UBSan build in
# $(FUZZ_BUILD)/. `make fuzz` runs every target FUZZ_SECONDS (corpora kept in
# $(FUZZ_BUILD)/corpus/TARGET); `make fuzz-smoke` runs
# each a few seconds and replays fuzz/regressions/, failing on any crash.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
.PHONY: fuzz-build fuzz fuzz-smoke
fuzz-build: deps
	@test -f $(FUZZ_BUILD)/build.ninja || CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Fuzz -DFULCRUM_FUZZ=ON -DFULCRUM_WERROR=OFF -DFULCRUM_CUDA=OFF
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	@rm -rf $(FUZZ_BUILD)/seeds && python3 fuzz/make_seeds.py $(FUZZ_BUILD)/seeds >/dev/null

fuzz: fuzz-build
	python3 fuzz/run.py --build $(FUZZ_BUILD) --seconds $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build
	python3 fuzz/run.py --build $(FUZZ_BUILD) --seconds $(FUZZ_SMOKE_SECONDS) --smoke
