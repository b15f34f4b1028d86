"""The virtual environment of the Python test tools: `python3 tests/tools/make_venv.py DIR`.

Creates DIR as a virtual environment with the packages of tests/tools/requirements.txt
(pinned, from PyPI), unless DIR already holds them, and prints its python. Nothing is
installed into the Python that runs this script. The tests that need these tools call it with
DIR = target/tmp/python-tools (tests/common/mod.rs, `python_tools`), and so does .ci/run.

DIR holds a copy of the requirements it was made from; when they change, DIR is made again.
It is built beside DIR and renamed into place, so tests running in several processes at once
(cargo nextest) never use a half-made one.
"""

import os
import shutil
import subprocess
import sys
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")


def python_of(directory):
    if os.name == "nt":
        return os.path.join(directory, "Scripts", "python.exe")
    return os.path.join(directory, "bin", "python")


def ready(directory, wanted):
    try:
        with open(os.path.join(directory, "requirements.txt"), "rb") as stamp:
            return stamp.read() == wanted and os.path.exists(python_of(directory))
    except OSError:
        return False


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tests/tools/make_venv.py DIR")
    target = os.path.abspath(sys.argv[1])
    with open(REQUIREMENTS, "rb") as f:
        wanted = f.read()
    if not ready(target, wanted):
        staging = f"{target}.{os.getpid()}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            venv.EnvBuilder(with_pip=True).create(staging)
        except (OSError, subprocess.CalledProcessError) as error:  # Debian's python3 without python3-venv
            shutil.rmtree(staging, ignore_errors=True)
            sys.exit(f"make_venv.py: cannot create a virtual environment ({error}); on Debian: apt-get install python3-venv")
        install = [python_of(staging), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        if subprocess.run([*install, "-r", REQUIREMENTS]).returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            sys.exit(f"make_venv.py: pip install -r {REQUIREMENTS} failed")
        shutil.copyfile(REQUIREMENTS, os.path.join(staging, "requirements.txt"))
        if not ready(target, wanted):
            # Stale (other requirements) or half there: replaced. A process that got there
            # first with the same requirements wins, and this one's copy is dropped.
            shutil.rmtree(target, ignore_errors=True)
            try:
                os.rename(staging, target)
            except OSError:
                pass
        shutil.rmtree(staging, ignore_errors=True)
        if not ready(target, wanted):
            sys.exit(f"make_venv.py: {target} is not ready")
    print(python_of(target))


if __name__ == "__main__":
    main()
