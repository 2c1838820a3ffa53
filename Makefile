# Developer shortcuts. `make build-dev` installs the package from this checkout.
.PHONY: build-dev test test-interpreters bench lint lint-tools demo clean

PYTHON ?= python

build-dev:
	$(PYTHON) -m pip install '.[test]'

test: build-dev
	$(PYTHON) -m pytest
	cargo test --quiet

# As CI does: the abi3 manylinux2014 wheel built with zig and checked by auditwheel, the wheel
# and an sdist by `twine check --strict`, .github/workflows/ by GitHub's workflow schema, the
# docs by `mkdocs build --strict`; the wheel tested on CPython 3.9 and 3.13 in fresh
# virtualenvs, without the tests marked slow. The tools go into a throwaway virtualenv.
test-interpreters:
	bash .ci/run interpreters

bench: build-dev
	$(PYTHON) -m pytest benches

demo:
	$(PYTHON) -m pip install . && skeleton-compressor demo

lint-tools:
	$(PYTHON) -m pip install 'ruff==0.17.6' 'mypy==2.4.1'

# stubtest compares _core.pyi with the compiled module: it needs the package installed.
lint:
	$(PYTHON) -m ruff check python tests benches
	$(PYTHON) -m ruff format --check python tests benches
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest skeleton_compressor._core
	cargo fmt --check
	# One clippy build: the bindings' feature only adds code, so this lints the core too.
	cargo clippy --all-targets --features python -- -D warnings

clean:
	rm -rf target dist build
