# memtrove: `make demo` to see it work, `make test` to check it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := .demo

.PHONY: venv demo test lint bench clean

venv: $(STAMP)

# Re-installs only when the project's metadata changes; otherwise a no-op.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,minilm,postgres]'
	touch $(STAMP)

demo: venv
	rm -rf $(DEMO)
	MEMTROVE_VAULT=$(DEMO)/vault.sqlite MEMTROVE_CONFIG_DIR=$(DEMO)/config \
		$(BIN)/python examples/demo.py examples/vault

lint: venv
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy src

test: lint
	$(BIN)/python -m pytest -q -n 3 --dist worksteal

bench: venv
	$(BIN)/python benchmarks/bench_index.py
	$(BIN)/python benchmarks/bench_search.py
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_redaction.py
	$(BIN)/python benchmarks/bench_retrieval.py
	$(BIN)/python benchmarks/bench_hooks.py
	$(BIN)/python benchmarks/bench_mcp.py
	$(BIN)/python benchmarks/bench_rest.py
	$(BIN)/python benchmarks/bench_memory.py

clean:
	rm -rf $(VENV) $(DEMO) .bench .pytest_cache .mypy_cache .ruff_cache
