# The README's commands. Every target installs what it needs first (scripts/install-deps.sh).
JOBS ?= $(shell nproc)
CTEST_FLAGS ?= --output-on-failure -j $(JOBS)

.PHONY: all deps build demo test test-release test-asan test-tsan bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build build -j $(JOBS)

# The main job: build, show asynchronous execution, then train LeNet on Fashion-MNIST (about
# three minutes on 2 cores) and print what it reached.
demo: build
	./build/bench/async_demo
	./build/janus train --model lenet --epochs 5 --batch-size 128 --lr 0.05 --momentum 0.9 \
	  --log-json build/demo-train.json

# Every test: the release suite, then the engine and core suites under AddressSanitizer+UBSan
# and ThreadSanitizer.
test: test-release test-asan test-tsan

test-release: build
	ctest --test-dir build $(CTEST_FLAGS)

test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build build-asan -j $(JOBS) --target base_test core_test engine_test ops_test autograd_test nn_test optim_test data_test conformance_test
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan $(CTEST_FLAGS)

test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build build-tsan -j $(JOBS) --target core_test engine_test ops_test autograd_test data_test
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 OMP_NUM_THREADS=1 \
	  ctest --test-dir build-tsan $(CTEST_FLAGS) -L '^(core|engine|ops|autograd|data)$$'

bench: build
	@for b in build/bench/*; do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf build build-debug build-asan build-tsan
