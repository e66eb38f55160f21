"""Helpers shared by the command-line tool checks in this folder."""
import json
import os
import subprocess
import sys


def fail(message):
    """Prints the FAILED line ctest looks for and exits 1."""
    print("FAILED: " + message)
    sys.exit(1)


def write_model(flatc, schema, work, name, model):
    """Writes `model` (the .tflite schema's JSON form, as a dict) to WORK/NAME.tflite with flatc; returns its path."""
    json_path = os.path.join(work, name + ".json")
    with open(json_path, "w") as f:
        json.dump(model, f)
    subprocess.run([flatc, "-b", "-o", work, schema, json_path], check=True)
    return os.path.join(work, name + ".tflite")
