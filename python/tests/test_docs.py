"""The Python examples of docs/python.md and README.md run as written, from the repository root, in order."""
import contextlib
import io
import os
import re

import pytest

from conftest import SOURCE_DIR


def python_blocks(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def run_blocks(path, monkeypatch):
    blocks = python_blocks(path)
    assert blocks, "no ```python blocks in %s" % path
    monkeypatch.chdir(SOURCE_DIR)
    namespace = {"__name__": "__doc_example__"}
    out = io.StringIO()
    for i, block in enumerate(blocks):
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(block, "%s block %d" % (os.path.basename(path), i + 1), "exec"), namespace)
            except Exception as e:  # name the block, then fail
                pytest.fail("%s, block %d raised %r:\n%s" % (path, i + 1, e, block))
    return out.getvalue()


def test_docs_python_md(monkeypatch):
    printed = run_blocks(os.path.join(SOURCE_DIR, "docs", "python.md"), monkeypatch)
    # What the page says the examples print.
    for text in ("1.5658458", "['atan_op'] ['offset']", "[0. 3. 6. 9.]", "0.5\n", "1000.0", "[-1. 70.]",
                 "broken.rs:1:", "Got value of type FLOAT64 but expected type FLOAT32",
                 "x [5] <class 'numpy.float32'>"):
        assert text in printed, "%r not printed:\n%s" % (text, printed)


def test_readme_python(monkeypatch):
    printed = run_blocks(os.path.join(SOURCE_DIR, "README.md"), monkeypatch)
    assert "1.5658458" in printed, printed
