#!/usr/bin/env bash
# Makes the benchmark's throwaway PKI in DIR: a "public" CA and one origin certificate for
# *.bench.test, bench.test, localhost and 127.0.0.1, both P-256 (the same key type as mitm-proxy's
# forged leaves, so every peer signs with the same algorithm). Never a trust anchor for anything
# but the benchmark's own processes; DIR is deleted after the run.
set -euo pipefail
dir=${1:?usage: make-pki.sh DIR}
mkdir -p "$dir"
cd "$dir"

openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
openssl req -x509 -new -key ca.key -sha256 -days 30 -subj "/O=mitm-proxy bench/CN=mitm-proxy bench CA" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -addext "subjectKeyIdentifier=hash" \
  -out ca.pem 2>/dev/null

openssl ecparam -name prime256v1 -genkey -noout -out origin.key 2>/dev/null
openssl req -new -key origin.key -subj "/O=mitm-proxy bench/CN=bench.test" -out origin.csr 2>/dev/null
cat > origin.ext <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:*.bench.test,DNS:bench.test,DNS:localhost,IP:127.0.0.1
authorityKeyIdentifier=keyid
EOF
openssl x509 -req -in origin.csr -CA ca.pem -CAkey ca.key -CAcreateserial -sha256 -days 29 \
  -extfile origin.ext -out origin.pem 2>/dev/null
rm -f origin.csr origin.ext ca.srl
# nginx workers run as an unprivileged user when nginx starts as root: they read nothing here after
# start-up, but keep the directory listable.
chmod 0755 "$dir"
chmod 0644 ./*.pem ./*.key
