# The commands of the README's Quick start, the benchmark of the generator, and the
# performance harness against wrk and oha (docs/PERFORMANCE.md).
.PHONY: demo server test test-quick bench bench-smoke bench-generate bench-queries

demo:        ## build, start a local PouchDB Server, run the benchmark against it, stop it
	bash scripts/demo.sh

server:      ## a PouchDB Server on disk with an admin for your own runs, in the foreground until Ctrl-C (SERVER_DIR, PASSWORD)
	bash scripts/server.sh

test:        ## formatting, lints, unit and functional tests (starts its own PouchDB Server; installs Chromium and a PyPI package)
	bash scripts/test.sh

test-quick:  ## formatting, lints, unit and PouchDB Server tests: no root, no Chromium, no Python
	bash scripts/test.sh --quick

bench-generate:  ## documents generated per second on one core
	cargo bench --bench generate

# One section alone, e.g. reads and bulk insert over https (nginx, TLS 1.3 AES-128-GCM for
# every client; docs/PERFORMANCE.md section 8): make bench BENCH_FLAGS="--sections tls".
bench:       ## sofabench against wrk and oha: reads, workload, generation, connections, memory, pacing, TLS (~35 min)
	python3 bench/bench.py $(BENCH_FLAGS)

bench-smoke: ## the same harness in seconds: checks it still runs (1 repetition, tiny sizes)
	python3 bench/bench.py --smoke $(BENCH_FLAGS)

bench-queries: ## the client's CPU per query against per read of the same answer size (~8 min)
	python3 bench/queries.py $(BENCH_FLAGS)
