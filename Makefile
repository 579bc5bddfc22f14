# Thin front door; the build is CMake + Ninja in build/.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: deps configure build run test bench clean format

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/fulcrum run configs/ipv4-router.click --port gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt --port net_null0,no-rx=1 --packets 50000000

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@scripts/hugepages.sh
	$(BUILD_DIR)/fulcrum bench --out $(BUILD_DIR)/bench.json

format:
	@find src elements tests bench -name '*.cc' -o -name '*.hh' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
