#!/bin/sh
# Installs isr-grader and isr-reference from a GitHub release of the grader: no Rust needed.
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/latest/download/install.sh | sh
#   sh install.sh [--version X.Y.Z|latest] [--dir DIR] [--repo OWNER/REPO]
#
# It picks the archive for this machine (Linux or macOS, x86_64 or aarch64), checks it against
# the release's SHA256SUMS (and refuses to install when it cannot), and copies both programs
# into DIR (default ~/.local/bin). Environment: ISR_GRADER_VERSION, ISR_GRADER_INSTALL_DIR,
# ISR_GRADER_REPO, and ISR_GRADER_BASE_URL (the folder holding SHA256SUMS and the archives,
# for a mirror; overrides --repo and --version).
set -eu

# The release workflow sets these two in the copy of this script it attaches to a release.
DEFAULT_REPO=
DEFAULT_VERSION=latest

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
    cat << 'USAGE'
usage: install.sh [--version X.Y.Z|latest] [--dir DIR] [--repo OWNER/REPO]
Installs isr-grader and isr-reference from a release of the grader's GitHub repository
into DIR (default ~/.local/bin), after checking the archive against SHA256SUMS.
Environment: ISR_GRADER_VERSION, ISR_GRADER_INSTALL_DIR, ISR_GRADER_REPO,
ISR_GRADER_BASE_URL (a folder holding SHA256SUMS and the archives).
USAGE
}

version=${ISR_GRADER_VERSION:-$DEFAULT_VERSION}
dir=${ISR_GRADER_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}
repo=${ISR_GRADER_REPO:-$DEFAULT_REPO}
base=${ISR_GRADER_BASE_URL:-}

while [ $# -gt 0 ]; do
    case $1 in
        --version) [ $# -ge 2 ] || die "--version needs a value"; version=$2; shift 2 ;;
        --dir) [ $# -ge 2 ] || die "--dir needs a value"; dir=$2; shift 2 ;;
        --repo) [ $# -ge 2 ] || die "--repo needs a value"; repo=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done

# Which build runs here.
case $(uname -s) in
    Linux) os=unknown-linux-musl ;;
    Darwin) os=apple-darwin ;;
    *) die "no release build for $(uname -s): Linux and macOS only (on Windows, use WSL)" ;;
esac
case $(uname -m) in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) die "no release build for the $(uname -m) processor: x86_64 and aarch64 only" ;;
esac
# A shell under Rosetta reports x86_64 on Apple silicon: install the native build.
if [ "$os" = apple-darwin ] && [ "$arch" = x86_64 ] &&
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    arch=aarch64
fi
target=$arch-$os

if [ -z "$base" ]; then
    [ -n "$repo" ] || die "which repository? Give --repo OWNER/REPO (the grader's GitHub repository) or set ISR_GRADER_REPO"
    case $version in
        latest) base=https://github.com/$repo/releases/latest/download ;;
        v*) base=https://github.com/$repo/releases/download/$version ;;
        *) base=https://github.com/$repo/releases/download/v$version ;;
    esac
fi

if command -v curl > /dev/null 2>&1; then
    fetch() { curl --proto '=https,file' -fsSL --retry 3 -o "$2" "$1"; }
elif command -v wget > /dev/null 2>&1; then
    fetch() { wget -q -O "$2" "$1"; }
else
    die "neither curl nor wget is installed"
fi
if command -v sha256sum > /dev/null 2>&1; then
    sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum > /dev/null 2>&1; then
    sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
elif command -v openssl > /dev/null 2>&1; then
    sha256() { openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1; }
else
    die "no sha256sum, shasum or openssl to check the download with"
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t isr-grader)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" ||
    die "cannot download $base/SHA256SUMS (is there such a release? is the repository public?)"
# The archive for this target: isr-grader-X.Y.Z-TARGET.tar.gz (its version is the release's).
line=$(grep -E "^[0-9a-f]{64}  \*?isr-grader-[^ /]+-$target\.tar\.gz\$" "$tmp/SHA256SUMS" | head -n 1) ||
    true
[ -n "$line" ] || die "the release at $base has no build for $target"
expected=${line%% *}
archive=${line##* }
archive=${archive#\*}
name=${archive%.tar.gz}
found_version=${name#isr-grader-}
found_version=${found_version%-"$target"}

say "downloading $archive"
fetch "$base/$archive" "$tmp/$archive" || die "cannot download $base/$archive"
actual=$(sha256 "$tmp/$archive")
[ "$actual" = "$expected" ] ||
    die "$archive does not match SHA256SUMS (expected $expected, got $actual): nothing installed"
say "checksum ok (sha256 $expected)"

tar -xzf "$tmp/$archive" -C "$tmp"
mkdir -p "$dir"
for bin in isr-grader isr-reference; do
    [ -f "$tmp/$name/$bin" ] || die "$archive has no $bin"
    # Copy next to the destination, then rename: a running old copy is never overwritten.
    cp "$tmp/$name/$bin" "$dir/.$bin.new"
    chmod 755 "$dir/.$bin.new"
    mv -f "$dir/.$bin.new" "$dir/$bin"
done
say "installed isr-grader and isr-reference $found_version ($target) in $dir"
"$dir/isr-grader" --version || die "$dir/isr-grader does not run on this machine"

case :${PATH:-}: in
    *:"$dir":*) ;;
    *) say "$dir is not on your PATH; add it, e.g.: echo 'export PATH=\"$dir:\$PATH\"' >> ~/.profile" ;;
esac
