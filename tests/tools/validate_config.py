"""Validates retrylint.toml files against retrylint.schema.json, as an editor does (Taplo, Even
Better TOML): each TOML file is read with tomllib, the value validated with jsonschema.

    python tests/tools/validate_config.py SCHEMA FILE...

Prints one JSON line per file: {"file": FILE, "valid": bool, "errors": [...]}. Exits 0 when
every file was read (valid or not), 2 on a usage error or a schema that is not valid itself.
Needs Python 3.11+ (tomllib) and jsonschema (tests/tools/requirements.txt).
"""

import json
import sys
import tomllib

import jsonschema


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: validate_config.py SCHEMA FILE...")
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as error:
        print(f"the schema is not valid: {error.message}", file=sys.stderr)
        sys.exit(2)
    validator = validator_class(schema)
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            try:
                value = tomllib.load(f)
            except tomllib.TOMLDecodeError as error:
                print(json.dumps({"file": path, "valid": False, "errors": [f"not TOML: {error}"]}))
                continue
        errors = [
            f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in validator.iter_errors(value)
        ]
        print(json.dumps({"file": path, "valid": not errors, "errors": errors}))


if __name__ == "__main__":
    main()
