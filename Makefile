# The two commands of the README, the benchmark of the generator, and the performance
# harness against wrk and oha (docs/PERFORMANCE.md).
.PHONY: demo test bench bench-smoke bench-generate

demo:        ## build, start a local PouchDB Server, run the benchmark against it, stop it
	bash scripts/demo.sh

test:        ## formatting, lints, unit and functional tests (starts its own PouchDB Server)
	bash scripts/test.sh

bench-generate:  ## documents generated per second on one core
	cargo bench --bench generate

bench:       ## sofabench against wrk and oha: reads, workload, generation, connections, memory (~30 min)
	python3 bench/bench.py $(BENCH_FLAGS)

bench-smoke: ## the same harness in seconds: checks it still runs (1 repetition, tiny sizes)
	python3 bench/bench.py --smoke $(BENCH_FLAGS)
