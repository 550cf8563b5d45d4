"""What the device check compares of a differential-tester program's run:
each output array's SHA-256 (of the differential tester's encoding, in
which NaNs are canonical), or the error it raised. 1,000 programs' outputs
themselves would outgrow what travels to a GPU machine; a digest per array
still says which array differs."""

import hashlib


def fingerprint(result):
    """A run's result as recorded by tests/differential/oracles.py's
    RUN_KERNELS ({"outputs": {name: encoded}} or {"error": text}), with
    each output replaced by its digest."""
    if "outputs" not in result:
        return dict(result)
    return {"outputs": {name: hashlib.sha256(str(encoded).encode()).hexdigest()
                        for name, encoded in result["outputs"].items()}}
