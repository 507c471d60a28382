# The two commands of the README, and the benchmark of the generator.
.PHONY: demo test bench-generate

demo:        ## build, start a local PouchDB Server, run the benchmark against it, stop it
	bash scripts/demo.sh

test:        ## formatting, lints, unit and functional tests (starts its own PouchDB Server)
	bash scripts/test.sh

bench-generate:  ## documents generated per second on one core
	cargo bench --bench generate
