#!/usr/bin/env python3
"""Names read from a model are printed escaped (issue #14): a crafted file cannot write control sequences to
the user's terminal.

Two models are written from JSON with flatc and Kiln's schema. The first (RESHAPE then RELU) has a description,
tensor names, a signature key and signature names holding ESC sequences, BEL, CR, DEL and the C1 control U+009B
(CSI); the second has a custom op of such a name that nothing serves. Every command that prints what a model
holds runs on them: `kiln inspect`, `kiln run --explain` (random inputs, outputs printed and written),
`kiln run --signature`, `kiln benchmark --enable_op_profiling --trace` and `kiln run` of the unserved op (which
fails naming it). Their stdout and stderr must hold no control byte but newline, and no C1 control; the names
must still be there, escaped (\\x1b[2J...), so a test that printed nothing would not pass; and the trace must
be valid JSON.

Usage: check_hostile_names.py KILN FLATC SCHEMA WORK_DIR
"""
import json
import os
import re
import subprocess
import sys

from tool_checks import fail, write_model

RESHAPE, RELU, CUSTOM = 22, 19, 32
CLEAR = "\x1b[2J\x1b]0;owned\x07"  # clear the screen, set the window title
NAMES = {
    "description": "a model " + CLEAR,
    "x": "x" + CLEAR,
    "y": "y\r\x1b[Kz\x7f",
    "z": "z\u009b31m",
    "key": "serve\x1b[5m",
    "custom": "Evil\x1b[31mRed",
}


def tensor(name, shape):
    return {"type": "FLOAT32", "buffer": 0, "shape": shape, "name": name}


def names_model(flatc, schema, work):
    return write_model(flatc, schema, work, "hostile_names", {
        "version": 3, "description": NAMES["description"],
        "operator_codes": [{"deprecated_builtin_code": RESHAPE, "builtin_code": "RESHAPE", "version": 1},
                           {"deprecated_builtin_code": RELU, "builtin_code": "RELU", "version": 1}],
        "subgraphs": [{
            "tensors": [tensor(NAMES["x"], [2, 3]), tensor(NAMES["y"], [3, 2]), tensor(NAMES["z"], [3, 2])],
            "inputs": [0], "outputs": [2],
            "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1],
                           "builtin_options_type": "ReshapeOptions", "builtin_options": {"new_shape": [3, 2]}},
                          {"opcode_index": 1, "inputs": [1], "outputs": [2]}],
        }],
        "signature_defs": [{"signature_key": NAMES["key"], "subgraph_index": 0,
                            "inputs": [{"name": NAMES["x"], "tensor_index": 0}],
                            "outputs": [{"name": NAMES["z"], "tensor_index": 2}]}],
        "buffers": [{}],
    })


def custom_model(flatc, schema, work):
    return write_model(flatc, schema, work, "hostile_custom", {
        "version": 3,
        "operator_codes": [{"deprecated_builtin_code": CUSTOM, "builtin_code": "CUSTOM",
                            "custom_code": NAMES["custom"], "version": 1}],
        "subgraphs": [{"tensors": [tensor(NAMES["x"], [4]), tensor(NAMES["z"], [4])], "inputs": [0], "outputs": [1],
                       "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1]}]}],
        "buffers": [{}],
    })


def run(cmd, expect_exit=0):
    result = subprocess.run(cmd, capture_output=True)
    text = result.stdout + result.stderr
    print("$ " + " ".join(repr(a) if not a.isprintable() else a for a in cmd))
    print(text.decode("utf-8", "backslashreplace"))
    if result.returncode != expect_exit:
        fail("%s exited %d, expected %d" % (cmd[1], result.returncode, expect_exit))
    bad = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", text)
    if bad:
        at = text[max(0, bad.start() - 40):bad.end() + 10]
        fail("%s printed a raw control byte 0x%s: %r" % (cmd[1], bad.group(0).hex(), at))
    return text.decode("utf-8")


def must_hold(text, what, *escaped):
    for e in escaped:
        if e not in text:
            fail("%s did not print %s (escaped: %s)" % (what, "the name", e))


def main():
    if len(sys.argv) != 5:
        fail("usage: check_hostile_names.py KILN FLATC SCHEMA WORK_DIR")
    kiln, flatc, schema, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    model = names_model(flatc, schema, work)
    custom = custom_model(flatc, schema, work)

    out = run([kiln, "inspect", model])
    must_hold(out, "kiln inspect", r"a model \x1b[2J\x1b]0;owned\x07", r"x\x1b[2J", r"z\xc2\x9b31m",
              r"serve\x1b[5m")
    out = run([kiln, "run", model, "--explain", "--output-dir", os.path.join(work, "out")])
    must_hold(out, "kiln run --explain", r"x\x1b[2J\x1b]0;owned\x07", r"z\xc2\x9b31m")
    out = run([kiln, "run", model, "--signature", NAMES["key"]])
    must_hold(out, "kiln run --signature", r"z\xc2\x9b31m")
    out = run([kiln, "run", model, "--signature", "no such key"], expect_exit=1)
    must_hold(out, "kiln run --signature with an unknown key", r"serve\x1b[5m")
    trace = os.path.join(work, "trace.json")
    run([kiln, "benchmark", "--graph=" + model, "--num_runs=3", "--min_secs=0", "--enable_op_profiling=true",
         "--trace=" + trace])
    with open(trace) as f:
        json.load(f)
    out = run([kiln, "inspect", custom])
    must_hold(out, "kiln inspect", r"CUSTOM:Evil\x1b[31mRed")
    out = run([kiln, "run", custom], expect_exit=1)
    must_hold(out, "kiln run of an unserved op", r"Evil\x1b[31mRed")
    print("every name printed escaped")


if __name__ == "__main__":
    main()
