/*
 * hmac.h - HMAC-SHA-256 (FIPS 180-4, RFC 2104), for the one place the
 * project needs a keyed one-way function: the proof browser's cookie
 * (web.h and web.c, SECURITY). The cookie must let a browser in again without
 * holding the page's token itself, so that a cookie read off a machine or
 * a proxy log cannot be replayed as a token (as a worker's token, when
 * one file serves both, or as the page's Bearer token): it carries
 * HMAC(token, a fixed label), which cannot be turned back into the token.
 * xxHash, which the project has, is not one-way; no crypto library is a
 * dependency, so the 150 lines are here.
 *
 * Not for bulk data or speed; pure functions, thread-safe.
 */
#ifndef WEB_HMAC_H
#define WEB_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define WEB_SHA256_BYTES 32

/*
 * web_sha256 - the SHA-256 digest of len bytes at data into out.
 */
void web_sha256(const void *data, size_t len, uint8_t out[WEB_SHA256_BYTES]);

/*
 * web_hmac_sha256 - HMAC-SHA-256 of msg (mlen bytes) under key (klen
 * bytes, any length: a key longer than a block is hashed first, RFC 2104)
 * into out.
 */
void web_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                     uint8_t out[WEB_SHA256_BYTES]);

#endif /* WEB_HMAC_H */
