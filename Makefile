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

# The same tests on an AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/).
# Warnings are not errors there: GCC 12's flow warnings report false positives under -fsanitize.
test-asan: deps
	@test -f build-asan/build.ninja || cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFULCRUM_SANITIZE=ON -DFULCRUM_WERROR=OFF
	@cmake --build build-asan -j $(JOBS)
	cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# A bounded soak before releases: the router, 2 workers, SOAK_SECONDS (600); flat RSS and the
# packet balance are asserted (tools/soak.py).
SOAK_SECONDS ?= 600
soak: build
	python3 tools/soak.py --seconds $(SOAK_SECONDS)

bench: build
	@scripts/hugepages.sh
	$(BUILD_DIR)/fulcrum bench --out $(BUILD_DIR)/bench.json

format:
	@find src elements tests bench -name '*.cc' -o -name '*.hh' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
