#ifndef MITM_TLS_SHIMS_H
#define MITM_TLS_SHIMS_H

// OpenSSL's macros and variadic calls, as functions Swift can call.

#ifndef OPENSSL_SUPPRESS_DEPRECATED
#define OPENSSL_SUPPRESS_DEPRECATED
#endif
#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/pkcs12.h>

// Server contexts facing clients: TLS 1.2+, ECDHE + AES-GCM/ChaCha (App Transport Security),
// tolerant of unexpected EOF, no renegotiation. Macros and SSL_OP_* constants are invisible to Swift.
int mitm_ssl_ctx_configure_server(SSL_CTX *ctx);

// Client contexts toward upstreams: TLS 1.2+, session cache for resumption, unexpected EOF tolerated.
int mitm_ssl_ctx_configure_client(SSL_CTX *ctx);

// SSL_set_tlsext_host_name is a macro.
int mitm_ssl_set_host_name(SSL *ssl, const char *name);

// SSL_add1_chain_cert is a macro.
int mitm_ssl_add1_chain_cert(SSL *ssl, X509 *cert);

// SSL_CTX_add1_chain_cert is a macro.
int mitm_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *cert);

// Gives `to` the session ticket keys of `from` (name, HMAC and AES keys: 80 bytes in OpenSSL 3), so a
// ticket one context issued resumes in the other. The get/set calls are macros.
int mitm_ssl_ctx_share_ticket_keys(SSL_CTX *to, SSL_CTX *from);

// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen.
EVP_PKEY *mitm_generate_ec_key(const char *curve);

// EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen.
EVP_PKEY *mitm_generate_rsa_key(unsigned int bits);

// BIO_get_mem_data is a macro.
long mitm_bio_mem_contents(BIO *bio, char **data);

// OPENSSL_free is a macro carrying file and line.
void mitm_openssl_free(void *pointer);

// PKCS#12 that Apple's SecPKCS12Import accepts: 3DES key/cert encryption and a SHA-1 MAC
// (OpenSSL 3 defaults to AES + SHA-256, which iOS and macOS refuse).
PKCS12 *mitm_pkcs12_create_apple(const char *password, const char *name, EVP_PKEY *key, X509 *cert);

// SSL_free_buffers releases idle read/write buffers; SSL_MODE_RELEASE_BUFFERS is a macro constant.
int mitm_ssl_release_buffers(SSL *ssl);

// BIO_set_retry_read and BIO_clear_retry_flags are macros (for a BIO_METHOD written in Swift).
void mitm_bio_set_retry_read(BIO *bio);
void mitm_bio_clear_retry_flags(BIO *bio);

#endif
