# Developer shortcuts. `make build-dev` installs the package from this checkout.
.PHONY: build-dev test bench lint lint-tools demo clean

PYTHON ?= python

build-dev:
	$(PYTHON) -m pip install '.[test]'

test: build-dev
	$(PYTHON) -m pytest
	cargo test --quiet

bench: build-dev
	$(PYTHON) -m pytest benches

demo:
	$(PYTHON) -m pip install . && skeleton-compressor demo

lint-tools:
	$(PYTHON) -m pip install 'ruff==0.17.6' 'mypy==2.4.1'

lint:
	$(PYTHON) -m ruff check python tests benches
	$(PYTHON) -m ruff format --check python tests benches
	$(PYTHON) -m mypy
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings

clean:
	rm -rf target dist build
