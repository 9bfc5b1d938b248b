#!/usr/bin/env bash
# tests/install/install_test.sh SOURCE_DIR BUILD_DIR FIXTURES_DIR
# perfkit as a user installs it: into a temporary prefix, where the binary
# records and reports, man finds its pages, bash completes its commands and
# options, pkg-config and find_package(perfkit CONFIG) find the library and
# the examples build against it and read a recording; and as a .deb (cpack),
# whose contents are checked and whose extracted binary runs.
set -euo pipefail
src=$1 build=$2 fixtures=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Outputs are taken whole before they are searched: `cmd | grep -q` under
# pipefail fails whenever grep's early exit meets a later write (SIGPIPE),
# which depends on how the writer's chunks and the scheduler happen to fall.
has() { grep -q -- "$2" <<<"$1"; }

# --- install into a prefix ---
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" --strip >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
bin=$prefix/bin/perfkit
[[ -x $bin ]] || fail "no $bin"
sections=$(readelf -S "$bin")
has "$sections" '\.debug_info\|\.symtab' && fail "the installed binary is not stripped"
out=$("$bin" --version)
has "$out" "^perfkit version " || fail "--version: $out"
out=$("$bin" version --build-options)
has "$out" "dwarf: \[ on" || fail "version --build-options: $out"

# The installed binary records a workload and reports it.
"$bin" record -q -g -o "$tmp/r.data" -- "$build/tests/workloads/cpuloop" 20 >/dev/null 2>"$tmp/rec.err" ||
  fail "record: $(cat "$tmp/rec.err")"
out=$("$bin" report --stdio -i "$tmp/r.data" 2>&1)
has "$out" "spin" || fail "report shows no spin: $out"

# --- manual pages: one per command, each with every option the CLI takes ---
man1=$prefix/share/man/man1
[[ -f $man1/perfkit.1 ]] || fail "no perfkit(1)"
commands=$("$bin" --help | awk '/^   [a-z]/ {print $1}')
[[ -n $commands ]] || fail "perfkit --help lists no commands"
for c in $commands; do
  page=$man1/perfkit-$c.1
  [[ -f $page ]] || fail "no manual page for $c"
  grep -q "^\.B $c\$" "$man1/perfkit.1" || fail "perfkit(1) does not list $c"
  args=$c
  [[ $c == data ]] && args="data convert"
  # Every option name in the command's --help, as roff writes it.
  for opt in $("$bin" $args --help | grep -oE '^  -[^ ]*( |$)|^  --[^ ]*' |
    tr ',' '\n' | grep -oE '^ *-[-A-Za-z0-9_]+'); do
    escaped=$(printf '%s' "$opt" | tr -d ' ' | sed 's/-/\\\\-/g')
    grep -q -- "$escaped" "$page" || fail "$c: $opt is not in $page"
  done
done
if command -v man >/dev/null; then
  out=$(MANPATH=$prefix/share/man man perfkit-report 2>&1)
  has "$out" "--html" || fail "man perfkit-report shows no --html: $(head -c 600 <<<"$out")"
fi

# --- bash completion: commands, options, event names ---
completion=$prefix/share/bash-completion/completions/perfkit
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _perfkit
           printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}
out=$(complete_words perfkit rep)
has "$out" "^report$" || fail "perfkit rep<TAB> does not complete report: $out"
out=$(complete_words perfkit report --so)
has "$out" "^--sort$" || fail "report --so<TAB>: no --sort: $out"
out=$(complete_words "$bin" record -e task-c)
has "$out" "^task-clock$" || fail "-e task-c<TAB>: no task-clock: $out"

# --- the library: pkg-config, find_package, the examples ---
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --exists perfkit || fail "pkg-config perfkit"
out=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags perfkit)
has "$out" "include/perfkit" || fail "pkg-config --cflags: $out"
cmake -S "$src/examples" -B "$tmp/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$tmp/examples.log" 2>&1 || { cat "$tmp/examples.log"; fail "configuring the examples"; }
cmake --build "$tmp/examples" >>"$tmp/examples.log" 2>&1 ||
  { cat "$tmp/examples.log"; fail "building the examples"; }
out=$("$tmp/examples/read_recording" "$fixtures/fp.data")
want=$("$bin" script -F event -i "$fixtures/fp.data" 2>/dev/null | wc -l)
grep -q "samples" <<<"$out" || fail "read_recording: $out"
[[ $(sed -n 's/^event .*: \([0-9]*\) samples$/\1/p' <<<"$out" | head -1) == "$want" ]] ||
  fail "read_recording counts $(head -1 <<<"$out"), perfkit script $want"

# --- the Debian package ---
(cd "$build" && cpack -G DEB -B "$tmp/package" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/package/perfkit_*.deb)
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for want in ./usr/bin/perfkit ./usr/share/man/man1/perfkit-report.1 \
  ./usr/share/bash-completion/completions/perfkit ./usr/include/perfkit/session/session.h \
  ./usr/lib/cmake/perfkit/perfkitConfig.cmake ./usr/lib/pkgconfig/perfkit.pc; do
  grep -qx -- "$want" <<<"$contents" || fail "the package lacks $want"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libdw1 libelf1 libzstd1 libtraceevent1; do
  grep -q "$lib" <<<"$depends" || fail "the package does not depend on $lib: $depends"
done
dpkg-deb -x "$deb" "$tmp/root"
out=$("$tmp/root/usr/bin/perfkit" report --stdio -i "$fixtures/fp.data" 2>&1)
has "$out" spin || fail "the packaged binary does not report: $(head -c 600 <<<"$out")"
echo "install test: passed"
