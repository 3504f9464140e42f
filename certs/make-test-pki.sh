#!/usr/bin/env bash
# Creates mitm-proxy's throwaway test PKI in OUTDIR (see certs/README.md).
# Keeps an existing complete, unexpired set; otherwise generates a fresh one.
set -euo pipefail

usage() {
    echo "usage: $0 OUTDIR" >&2
    exit 2
}

[[ $# -eq 1 && -n "$1" ]] || usage

if ! command -v openssl >/dev/null 2>&1; then
    echo "make-test-pki.sh: openssl is not installed or not in PATH (Debian/Ubuntu: apt-get install openssl; macOS: it ships with the system)" >&2
    exit 1
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
config="$here/test-pki.cnf"
out="$1"

if [[ ! -f "$config" ]]; then
    echo "make-test-pki.sh: missing $config" >&2
    exit 1
fi

certificates=(root intermediate origin origin-rsa untrusted)
outputs=(
    root.pem root-key.pem
    intermediate.pem intermediate-key.pem
    origin.pem origin-key.pem origin-chain.pem
    origin-rsa.pem origin-rsa-key.pem origin-rsa-chain.pem
    untrusted.pem untrusted-key.pem untrusted-chain.pem
)

is_complete() {
    local name
    for name in "${outputs[@]}"; do
        [[ -s "$out/$name" ]] || return 1
    done
    for name in "${certificates[@]}"; do
        openssl x509 -in "$out/$name.pem" -noout -checkend 86400 >/dev/null 2>&1 || return 1
    done
}

if is_complete; then
    echo "make-test-pki.sh: $out already holds a complete test PKI; nothing to do" >&2
    exit 0
fi

mkdir -p "$out"
work="$(mktemp -d "${out%/}/.make-test-pki.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log="$work/openssl.log"

# Runs an openssl command, showing its output only when it fails.
quietly() {
    if ! "$@" >"$log" 2>&1; then
        echo "make-test-pki.sh: failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}

serial() {
    printf '0x%s' "$(openssl rand -hex 16)"
}

new_ec_key() {
    quietly openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
        -pkeyopt ec_param_enc:named_curve -out "$work/$1-key.pem"
}

new_rsa_key() {
    quietly openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/$1-key.pem"
}

# self_signed NAME SUBJECT EXTENSIONS DAYS
self_signed() {
    quietly openssl req -new -x509 -utf8 -config "$config" -extensions "$3" \
        -key "$work/$1-key.pem" -subj "$2" -days "$4" -sha256 -set_serial "$(serial)" \
        -out "$work/$1.pem"
}

# signed_by ISSUER NAME SUBJECT EXTENSIONS DAYS
signed_by() {
    quietly openssl req -new -utf8 -config "$config" \
        -key "$work/$2-key.pem" -subj "$3" -out "$work/$2.csr"
    quietly openssl x509 -req -in "$work/$2.csr" \
        -CA "$work/$1.pem" -CAkey "$work/$1-key.pem" -set_serial "$(serial)" \
        -days "$5" -sha256 -extfile "$config" -extensions "$4" -out "$work/$2.pem"
}

organization="/O=mitm-proxy tests"

new_ec_key root
self_signed root "$organization/CN=mitm-proxy TEST Public Root – not a trust anchor" root_ext 3650

new_ec_key intermediate
signed_by root intermediate "$organization/CN=mitm-proxy TEST Public Intermediate – not a trust anchor" \
    intermediate_ext 3650

new_ec_key origin
signed_by intermediate origin "$organization/CN=origin.test (EC P-256)" origin_ec_ext 397

new_rsa_key origin-rsa
signed_by intermediate origin-rsa "$organization/CN=origin.test (RSA 2048)" origin_rsa_ext 397

new_ec_key untrusted
self_signed untrusted "$organization/CN=untrusted.test (self-signed)" untrusted_ext 397

for name in origin origin-rsa; do
    cat "$work/$name.pem" "$work/intermediate.pem" >"$work/$name-chain.pem"
done
cp "$work/untrusted.pem" "$work/untrusted-chain.pem"

for name in "${outputs[@]}"; do
    case "$name" in
        *-key.pem) chmod 600 "$work/$name" ;;
        *) chmod 644 "$work/$name" ;;
    esac
    mv -f "$work/$name" "$out/$name"
done

echo "make-test-pki.sh: wrote a fresh test PKI to $out" >&2
