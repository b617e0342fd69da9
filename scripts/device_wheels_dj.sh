#!/usr/bin/env bash
# Builds .whl-dj, what scripts/device_django.sh and scripts/device_multigpu.sh carry to the
# device machine (which reaches no registry and has numba and numba-cuda but NumPy 2.5, no
# Django stack, no Redis): wheels for CPython 3.12 on x86-64 Linux of the project's runtime
# and test dependencies (pinned in pyproject.toml; numba and numba-cuda are the image's), and
# Debian's redis-server and redis-tools with their libraries as .debs, unpacked there with
# `dpkg -x` (never installed). Run here, from the repository root; the device command then
# starts with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#       --target /tmp/site .whl-dj/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1;
# The call carries at most 64 MiB in all: the script prints the size.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
DEST=.whl-dj
rm -rf "$DEST"
mkdir -p "$DEST/deb"
# Runtime pins from pyproject.toml less numba / numba-cuda (the image's) and gunicorn (unused
# there) and the dev tools the device runs never use (type stubs, lint, browser, API fuzzing,
# load generation: they would push the carry past 64 MiB), plus what the gpu-marked tests import.
mapfile -t PINS < <("$PY" - <<'PYEOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
skip = ("numba", "numba-cuda", "gunicorn", "ruff", "playwright", "mypy", "django-stubs",
        "django-stubs-ext", "djangorestframework-stubs", "celery-types", "pytest-xdist",
        "schemathesis", "locust")
for pin in project["dependencies"] + project["optional-dependencies"]["dev"]:
    name = pin.split("==")[0].split("[")[0].strip()
    if name not in skip:
        print(pin)
PYEOF
)
"$PY" -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DEST" "${PINS[@]}"
# The image's numba needs no wheel; one pulled in as a dependency would shadow it.
rm -f "$DEST"/numba-*.whl "$DEST"/numba_cuda-*.whl "$DEST"/llvmlite-*.whl
# pytest-playwright pulls the browser driver in (53 MB): no device run drives a browser.
rm -f "$DEST"/playwright-*.whl "$DEST"/pytest_playwright-*.whl
(cd "$DEST/deb" && apt-get download redis-server redis-tools liblzf1 libjemalloc2)
du -sh "$DEST"
ls "$DEST" | wc -l
