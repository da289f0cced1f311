# The release artifacts and the checks scripts/test runs on them (sourced, not run; needs env.sh).
# Each check fails the calling script (non-zero exit) with a message saying what is wrong.
#   check_crate_packages        scripts/test: `cargo package` of every publishable crate, then
#                               its metadata and the file list of each .crate
#   check_python_wheel WHEEL    scripts/test-python: the abi3 wheel installed offline into an
#                               empty virtualenv, and the README's Python quickstart run from it
#   check_node_package TARBALL  scripts/test-node: the `npm pack` tarball installed offline into
#                               an empty npm project, and the README's Node quickstart run from it
# docs/releasing.md describes them.

# Where the wheel and the npm tarball are written (the .crate files are in $CARGO_TARGET_DIR/package).
export AGENT_DIST_DIR="${AGENT_DIST_DIR:-$CARGO_TARGET_DIR/dist}"

package_fail() {
    printf 'PACKAGE CHECK FAILED: %s\n' "$*" >&2
    exit 1
}

# A new empty directory outside the clone. The checks remove theirs when they pass and leave
# it for a look when they fail (the failure names it).
package_tmpdir() {
    mktemp -d "${TMPDIR:-/tmp}/agent-core-$1.XXXXXX"
}

# Packages every workspace crate that may be published (`publish` not false), then checks:
# the crates.io metadata is complete, and each .crate holds Cargo.toml, its README and
# src/lib.rs, no build output or binaries, no file over 256 KiB and is under 512 KiB in all.
#
# --no-verify: verifying builds each crate again from its packaged sources, without the
# workspace's feature unification, so most dependencies are compiled a second time: measured
# at about 2.5 minutes on 2 cores with a warm target directory (more from cold), too much for a
# CI budget that is nearly used up. Release verifies (see docs/releasing.md); here a dry run with
# the file-list check costs about a second. --offline: the dry run needs nothing from crates.io
# beyond the index entries `cargo test` has already cached, so it cannot flake on the network.
# --allow-dirty: the check is about the manifests and file lists, so it runs on work in progress too.
check_crate_packages() {
    local metadata out crates=() line name version readme crate listing bad size
    metadata="$(cargo metadata --format-version 1 --no-deps --locked --offline)" ||
        package_fail "cargo metadata failed"
    # One "name version readme" line per publishable crate (`publish = false` reads as []), or
    # "MISSING name: fields" for incomplete crates.io metadata.
    out="$(python3 -c '
import json, os, sys
for p in sorted(json.load(sys.stdin)["packages"], key=lambda p: p["name"]):
    if p["publish"] == []:
        continue
    missing = [f for f in ("description", "license", "repository", "documentation", "readme", "rust_version") if not p.get(f)]
    missing += [f + " (1 to 5)" for f in ("keywords", "categories") if not 1 <= len(p[f]) <= 5]
    if missing:
        print("MISSING", p["name"] + ":", ", ".join(missing))
    else:
        readme = os.path.relpath(os.path.join(os.path.dirname(p["manifest_path"]), p["readme"]), os.path.dirname(p["manifest_path"]))
        print(p["name"], p["version"], readme)
' <<<"$metadata")" || package_fail "cannot read cargo metadata"
    [ -n "$out" ] || package_fail "no publishable crate in the workspace"
    mapfile -t crates <<<"$out"
    for line in "${crates[@]}"; do
        [[ "$line" != MISSING* ]] || package_fail "missing or invalid [package] metadata: ${line#MISSING }"
    done

    local flags=()
    for line in "${crates[@]}"; do flags+=(-p "${line%% *}"); done
    cargo package "${flags[@]}" --no-verify --locked --offline --allow-dirty ||
        package_fail "cargo package failed"

    for line in "${crates[@]}"; do
        read -r name version readme <<<"$line"
        crate="$CARGO_TARGET_DIR/package/$name-$version.crate"
        [ -f "$crate" ] || package_fail "$name: $crate was not written"
        # "size path" per file, the path without the "<name>-<version>/" prefix.
        listing="$(tar -tvzf "$crate" | awk -v p="$name-$version/" '{ path = $6; sub("^" p, "", path); print $3, path }')" ||
            package_fail "$name: cannot list $crate"
        for required in Cargo.toml Cargo.toml.orig "$readme" src/lib.rs; do
            grep -qxF -- "$required" <(cut -d' ' -f2- <<<"$listing") ||
                package_fail "$name: $crate lacks $required"
        done
        bad="$(cut -d' ' -f2- <<<"$listing" | grep -E '(^|/)(target|node_modules|\.venv|__pycache__|fuzz|artifacts|corpus)/|\.(node|so|dylib|dll|a|rlib|whl|tgz|crate|sqlite[0-9]*|db|pyc)$' || true)"
        [ -z "$bad" ] || package_fail "$name: build output or binaries in $crate: $(tr '\n' ' ' <<<"$bad")"
        bad="$(awk '$1 > 262144 { print $2 " (" $1 " bytes)" }' <<<"$listing")"
        [ -z "$bad" ] || package_fail "$name: files over 256 KiB in $crate: $(tr '\n' ' ' <<<"$bad")"
        size="$(stat -c %s "$crate")"
        [ "$size" -le 524288 ] || package_fail "$name: $crate is $size bytes (over 512 KiB)"
        printf '%s %s: %s files, %s KiB compressed\n' "$name" "$version" "$(wc -l <<<"$listing")" "$((size / 1024))"
    done
}

# Installs WHEEL with `pip install --no-index` (nothing else may be needed) into an empty
# virtualenv and runs bindings/python/examples/quickstart.py (the README's Python quickstart)
# from a directory outside the clone, so only the installed package can be imported.
# Needs: the path of a Python that has pip (the one that built the wheel).
check_python_wheel() {
    local wheel="$1" py="$2" tag dir
    [ -f "$wheel" ] || package_fail "no wheel at $wheel"
    # The tag must say abi3: one wheel for every CPython >= 3.9.
    case "$(basename "$wheel")" in
        *-cp39-abi3-*.whl) ;;
        *) package_fail "$(basename "$wheel") is not an abi3 wheel for CPython >= 3.9 (cp39-abi3)" ;;
    esac
    tag="$("$py" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(*[l.split(": ", 1)[1] for n in z.namelist() if n.endswith(".dist-info/WHEEL") for l in z.read(n).decode().splitlines() if l.startswith("Tag: ")])' "$wheel")"
    case "$tag" in
        cp39-abi3-*) ;;
        *) package_fail "$(basename "$wheel"): WHEEL says Tag: $tag, not cp39-abi3-*" ;;
    esac

    dir="$(package_tmpdir wheel)"
    /usr/bin/python3 -m venv --without-pip "$dir/venv"
    # The building Python's pip installs into the empty venv; --isolated ignores PIP_* variables
    # and pip config (a find-links directory there would be an index in disguise).
    "$py" -m pip --isolated --python "$dir/venv/bin/python" install -q --no-index "$wheel" ||
        package_fail "pip install --no-index $(basename "$wheel") into an empty virtualenv ($dir/venv) failed"
    # The package must come from the new virtualenv (nothing else is on its path).
    (cd "$dir" && "$dir/venv/bin/python" -I -c 'import sys, agent_core; assert agent_core.__file__.startswith(sys.prefix), agent_core.__file__') ||
        package_fail "agent_core does not import from the empty virtualenv's copy (in $dir)"
    cp bindings/python/examples/quickstart.py "$dir/"
    # -I: neither the script's directory nor PYTHON* variables nor user site-packages.
    (cd "$dir" && "$dir/venv/bin/python" -I quickstart.py) ||
        package_fail "the README's Python quickstart failed when run from the installed wheel (in $dir)"
    rm -rf "$dir"
    printf '%s: installed offline into an empty virtualenv, quickstart passed\n' "$(basename "$wheel")"
}

# Installs TARBALL (`npm pack` of bindings/node) with `npm install --offline` into an empty npm
# project and runs bindings/node/examples/quickstart.mjs (the README's Node quickstart) there.
check_node_package() {
    local tarball="$1" dir listing required
    [ -f "$tarball" ] || package_fail "no npm tarball at $tarball"
    listing="$(tar -tzf "$tarball")" || package_fail "cannot list $tarball"
    for required in package.json README.md index.js index.d.ts lib/index.js lib/index.d.ts agent-core.linux-x64-gnu.node; do
        grep -qxF "package/$required" <<<"$listing" || package_fail "$(basename "$tarball") lacks $required"
    done
    # Every lib/*.js ships with its declarations.
    for js in $(grep -E '^package/lib/[^/]+\.js$' <<<"$listing"); do
        grep -qxF "${js%.js}.d.ts" <<<"$listing" || package_fail "$(basename "$tarball") has ${js#package/} without ${js#package/}'s declarations (.d.ts)"
    done

    dir="$(package_tmpdir npm)"
    (cd "$dir" && npm init -y >/dev/null &&
        npm install --offline --no-audit --no-fund --loglevel=error "$tarball") ||
        package_fail "npm install --offline $(basename "$tarball") into an empty project ($dir) failed"
    [ ! -e "$dir/node_modules/zod" ] || package_fail "installing the package pulled in zod (an optional peer)"
    # The package must resolve to the project's node_modules copy.
    (cd "$dir" && node -e 'const p = require.resolve("agent-core"); if (!p.startsWith(process.cwd() + "/node_modules/agent-core/")) throw new Error(p)') ||
        package_fail "agent-core does not resolve to the installed copy (in $dir)"
    cp bindings/node/examples/quickstart.mjs "$dir/"
    (cd "$dir" && node quickstart.mjs) ||
        package_fail "the README's Node quickstart failed when run from the installed package (in $dir)"
    rm -rf "$dir"
    printf '%s: installed offline into an empty npm project, quickstart passed\n' "$(basename "$tarball")"
}
