#include "mitm_tls_shims.h"
#include <openssl/x509.h>

static const char *server_ciphers_tls12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

int mitm_ssl_ctx_configure_server(SSL_CTX *ctx) {
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) return 0;
    if (!SSL_CTX_set_cipher_list(ctx, server_ciphers_tls12)) return 0;
    if (!SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384")) return 0;
    /* The client's order of suites wins, as with nginx's and OpenSSL's defaults: every suite offered here is strong,
       and the client knows which it runs fastest (AES-128-GCM with AES hardware, ChaCha20 without). */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    return 1;
}

int mitm_ssl_ctx_configure_client(SSL_CTX *ctx) {
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    return 1;
}

int mitm_ssl_set_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

int mitm_ssl_add1_chain_cert(SSL *ssl, X509 *cert) {
    return (int)SSL_add1_chain_cert(ssl, cert);
}

int mitm_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return (int)SSL_CTX_add1_chain_cert(ctx, cert);
}

int mitm_ssl_ctx_share_ticket_keys(SSL_CTX *to, SSL_CTX *from) {
    unsigned char keys[80];
    int ok = SSL_CTX_get_tlsext_ticket_keys(from, keys, sizeof keys) == 1 &&
             SSL_CTX_set_tlsext_ticket_keys(to, keys, sizeof keys) == 1;
    OPENSSL_cleanse(keys, sizeof keys);
    return ok;
}

EVP_PKEY *mitm_generate_ec_key(const char *curve) {
    return EVP_EC_gen(curve);
}

EVP_PKEY *mitm_generate_rsa_key(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

long mitm_bio_mem_contents(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

void mitm_openssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

PKCS12 *mitm_pkcs12_create_apple(const char *password, const char *name, EVP_PKEY *key, X509 *cert) {
    int nid = NID_pbe_WithSHA1And3_Key_TripleDES_CBC;
    PKCS12 *p12 = PKCS12_create(password, name, key, cert, NULL, nid, nid, 2048, -1, 0);
    if (p12 == NULL) return NULL;
    if (!PKCS12_set_mac(p12, password, -1, NULL, 0, 2048, EVP_sha1())) {
        PKCS12_free(p12);
        return NULL;
    }
    return p12;
}

int mitm_ssl_release_buffers(SSL *ssl) {
    return SSL_free_buffers(ssl);
}

void mitm_bio_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

void mitm_bio_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}
