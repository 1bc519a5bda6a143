/*
 * hmac.c - SHA-256 and HMAC-SHA-256 (hmac.h is the manual), written from
 * FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 6.2) and RFC 2104. Checked in
 * tests/test_web.c against the standards' test vectors.
 *
 * OWNS: nothing (pure functions, thread-safe).
 * CALLS: libc only; web.c calls it for the cookie (web.h, SECURITY).
 */
#include <string.h>

#include "web/hmac.h"

/* ---- constants ---------------------------------------------------------- */

#define BLOCK 64 /* bytes a SHA-256 block holds */

/* FIPS 180-4, 4.2.2: the first 32 bits of the fractional parts of the
 * cube roots of the first 64 primes. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/* ---- types -------------------------------------------------------------- */

typedef struct sha256 {
    uint32_t h[8];
    uint8_t buf[BLOCK];
    size_t n;       /* bytes in buf */
    uint64_t total; /* bytes hashed */
} sha256;

/* ---- SHA-256 ------------------------------------------------------------ */

static uint32_t
ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void
compress(sha256 *s, const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 =
            h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

/* FIPS 180-4, 5.3.3: the initial hash value. */
static void
sha_init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->n = 0;
    s->total = 0;
}

static void
sha_add(sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->total += len;
    while (len) {
        size_t k = BLOCK - s->n < len ? BLOCK - s->n : len;
        memcpy(s->buf + s->n, p, k);
        s->n += k;
        p += k;
        len -= k;
        if (s->n == BLOCK) {
            compress(s, s->buf);
            s->n = 0;
        }
    }
}

/* Padding (5.1.1: a 1 bit, zeros, the length in bits, big-endian) and
 * the digest, big-endian words. */
static void
sha_end(sha256 *s, uint8_t out[WEB_SHA256_BYTES])
{
    uint64_t bits = s->total * 8;
    uint8_t pad[BLOCK + 8] = {0x80};
    size_t padlen = s->n < 56 ? 56 - s->n : 120 - s->n;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha_add(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void
web_sha256(const void *data, size_t len, uint8_t out[WEB_SHA256_BYTES])
{
    sha256 s;
    sha_init(&s);
    sha_add(&s, data, len);
    sha_end(&s, out);
}

/* ---- HMAC --------------------------------------------------------------- */

/* RFC 2104: H((K ^ opad) || H((K ^ ipad) || msg)), K padded to a block. */
void
web_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                uint8_t out[WEB_SHA256_BYTES])
{
    uint8_t k[BLOCK] = {0}, pad[BLOCK], inner[WEB_SHA256_BYTES];
    if (klen > BLOCK)
        web_sha256(key, klen, k);
    else
        memcpy(k, key, klen);
    sha256 s;
    for (int i = 0; i < BLOCK; i++)
        pad[i] = k[i] ^ 0x36;
    sha_init(&s);
    sha_add(&s, pad, BLOCK);
    sha_add(&s, msg, mlen);
    sha_end(&s, inner);
    for (int i = 0; i < BLOCK; i++)
        pad[i] = k[i] ^ 0x5c;
    sha_init(&s);
    sha_add(&s, pad, BLOCK);
    sha_add(&s, inner, sizeof inner);
    sha_end(&s, out);
    memset(k, 0, sizeof k); /* the key does not outlive the call */
}
