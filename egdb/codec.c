/*
 * codec.c - prefix code construction, header coding and block decoding of
 * the compressed slice format (format and reasons in codec.h).
 */
#include <string.h>

#include <xxhash.h>

#include "egdb/le.h"

#include "egdb/codec.h"

/* ---- constants -------------------------------------------------------- */

static const unsigned char cwl_magic[8] = {'C', 'K', 'C', 'W', 'L', 0, 0, EGCD_VERSION};

/* ---- dropped positions ---------------------------------------------------- */

/* Whether the side not to move in p would have a capture if it moved. */
static int
threatens(const eng_pos *p)
{
    eng_pos q = *p;
    q.stm ^= 1;
    return eng_has_capture(&q);
}

int
egcd_dropped(const eng_pos *p, int flags)
{
    if (eng_has_capture(p))
        return EGCD_CAPTURE;
    if (!(flags & EGCD_FLAG_THREATS) || !threatens(p))
        return EGCD_KEPT;
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    for (int k = 0; k < n; k++) {
        eng_pos c;
        eng_make(p, &l.m[k], &c);
        if (!eng_has_capture(&c) && threatens(&c))
            return EGCD_KEPT;
    }
    return EGCD_THREAT;
}

/* ---- prefix code -------------------------------------------------------- */

/*
 * Plain Huffman on at most 64 symbols (quadratic selection is fine at this
 * size), then the length limit by the method of the JPEG standard (Annex
 * K.3): while a code is longer than the limit, take two leaves from the
 * deepest level, hang one under a shallower leaf, and re-give the lengths
 * to symbols in order of frequency. The code stays complete and optimal
 * enough (the limit is rarely reached: only lengths that occur once in a
 * million runs are that long).
 */
void
egcd_code_lengths(const uint64_t freq[EGCD_NSYM], uint8_t len[EGCD_NSYM], int max_bits)
{
    uint64_t w[2 * EGCD_NSYM];
    int parent[2 * EGCD_NSYM], alive[2 * EGCD_NSYM];
    int n = 0, used[EGCD_NSYM], nused = 0;
    memset(len, 0, EGCD_NSYM);
    for (int s = 0; s < EGCD_NSYM; s++)
        if (freq[s]) {
            used[nused++] = s;
            w[n] = freq[s];
            parent[n] = -1;
            alive[n] = 1;
            n++;
        }
    if (nused == 0)
        return;
    if (nused == 1) {
        len[used[0]] = 1;
        return;
    }
    int nodes = n;
    for (int merges = 0; merges < nused - 1; merges++) {
        int a = -1, b = -1;
        for (int i = 0; i < nodes; i++) {
            if (!alive[i])
                continue;
            if (a < 0 || w[i] < w[a]) {
                b = a;
                a = i;
            } else if (b < 0 || w[i] < w[b]) {
                b = i;
            }
        }
        alive[a] = alive[b] = 0;
        w[nodes] = w[a] + w[b];
        parent[nodes] = -1;
        alive[nodes] = 1;
        parent[a] = parent[b] = nodes;
        nodes++;
    }
    int bl_count[64] = {0};
    int maxd = 0;
    for (int i = 0; i < n; i++) {
        int d = 0;
        for (int x = i; parent[x] >= 0; x = parent[x])
            d++;
        bl_count[d]++;
        if (d > maxd)
            maxd = d;
    }
    for (int i = maxd; i > max_bits; i--) {
        while (bl_count[i] > 0) {
            int j = i - 2;
            while (j > 0 && bl_count[j] == 0)
                j--;
            bl_count[i] -= 2;
            bl_count[i - 1] += 1;
            bl_count[j + 1] += 2;
            bl_count[j] -= 1;
        }
    }
    /* Re-give lengths: most frequent symbols get the shortest codes. */
    int order[EGCD_NSYM];
    for (int i = 0; i < nused; i++)
        order[i] = i;
    for (int i = 1; i < nused; i++) { /* insertion sort by frequency, descending */
        int x = order[i], j = i - 1;
        while (j >= 0 && freq[used[order[j]]] < freq[used[x]]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    int k = 0;
    for (int l = 1; l <= max_bits && l < 64; l++)
        for (int c = 0; c < bl_count[l]; c++)
            len[used[order[k++]]] = (uint8_t)l;
}

void
egcd_codes(const uint8_t len[EGCD_NSYM], uint16_t code[EGCD_NSYM])
{
    int count[EGCD_MAX_BITS + 1] = {0};
    for (int s = 0; s < EGCD_NSYM; s++)
        count[len[s]]++;
    count[0] = 0;
    uint16_t next[EGCD_MAX_BITS + 2];
    uint32_t c = 0;
    for (int l = 1; l <= EGCD_MAX_BITS; l++) {
        c = (c + (uint32_t)count[l - 1]) << 1;
        next[l] = (uint16_t)c;
    }
    for (int s = 0; s < EGCD_NSYM; s++)
        code[s] = len[s] ? next[len[s]]++ : 0;
}

/* The decoding-table entry of symbol s with a code of l bits. */
static uint32_t
fast_entry(int s, int l)
{
    int eb;
    uint32_t base = egcd_bucket_base(s % EGCD_NLEN, &eb);
    return 1u << 31 | base << 10 | (uint32_t)eb << 5 | (uint32_t)(s >= EGCD_NLEN) << 4 |
           (uint32_t)l;
}

int
egcd_decoder_init(egcd_decoder *d, const uint8_t len[EGCD_NSYM])
{
    memset(d, 0, sizeof *d);
    for (int s = 0; s < EGCD_NSYM; s++) {
        if (len[s] > EGCD_MAX_BITS)
            return -1;
        d->count[len[s]]++;
    }
    d->count[0] = 0;
    /* Kraft check: a damaged table must not make the decoder walk off. */
    uint64_t kraft = 0;
    for (int l = 1; l <= EGCD_MAX_BITS; l++)
        kraft += (uint64_t)d->count[l] << (EGCD_MAX_BITS - l);
    if (kraft > (1ull << EGCD_MAX_BITS))
        return -1;
    /* Canonical code: the first code of length l is (first(l-1) +
     * count(l-1)) << 1, starting from 0; symbols of one length take
     * consecutive codes in symbol order. */
    uint32_t code = 0, index = 0;
    for (int l = 1; l <= EGCD_MAX_BITS; l++) {
        d->first_code[l] = (uint16_t)code;
        d->first_index[l] = (uint16_t)index;
        index += d->count[l];
        code = (code + d->count[l]) << 1;
    }
    int k = 0;
    for (int l = 1; l <= EGCD_MAX_BITS; l++)
        for (int s = 0; s < EGCD_NSYM; s++)
            if (len[s] == l)
                d->sorted[k++] = (uint8_t)s;
    uint16_t codes[EGCD_NSYM];
    egcd_codes(len, codes);
    for (int s = 0; s < EGCD_NSYM; s++) {
        int l = len[s];
        if (l == 0 || l > EGCD_FAST_BITS)
            continue;
        uint32_t base = (uint32_t)codes[s] << (EGCD_FAST_BITS - l);
        for (uint32_t f = 0; f < (1u << (EGCD_FAST_BITS - l)); f++)
            d->fast[base + f] = fast_entry(s, l);
    }
    return 0;
}

/* ---- header ------------------------------------------------------------- */

void
egcd_header_encode(const egcd_header *h, unsigned char b[EGCD_HEADER_BYTES])
{
    memset(b, 0, EGCD_HEADER_BYTES);
    memcpy(b, cwl_magic, sizeof cwl_magic);
    egle_put_slice(b + 8, &h->slice);
    b[14] = h->flags;
    b[15] = h->order;
    egle_put64(b + 16, h->positions);
    b[24] = h->page_shift;
    egle_put32(b + 28, h->nblocks);
    egle_put64(b + 32, h->data_bytes);
    egle_put64(b + 40, h->wins);
    egle_put64(b + 48, h->losses);
    egle_put64(b + 56, h->draws);
    egle_put64(b + 64, h->table_hash);
    egle_put64(b + 72, XXH3_64bits(b, 72));
}

int
egcd_header_decode(const unsigned char b[EGCD_HEADER_BYTES], egcd_header *h)
{
    if (memcmp(b, cwl_magic, 7) != 0)
        return -1;
    if (b[7] < EGCD_VERSION_OLDEST || b[7] > EGCD_VERSION)
        return -2;
    if (egle_get64(b + 72) != XXH3_64bits(b, 72))
        return -3;
    h->version = b[7];
    egle_get_slice(b + 8, &h->slice);
    h->flags = b[14];
    h->order = b[15];
    h->positions = egle_get64(b + 16);
    h->page_shift = b[24];
    h->nblocks = egle_get32(b + 28);
    h->data_bytes = egle_get64(b + 32);
    h->wins = egle_get64(b + 40);
    h->losses = egle_get64(b + 48);
    h->draws = egle_get64(b + 56);
    h->table_hash = egle_get64(b + 64);
    return 0;
}

/* ---- block decoding ----------------------------------------------------- */

/*
 * Sets positions [start, start + len) of a zeroed 2-bit array to v, 32
 * positions (one 64-bit word) at a time: runs average hundreds of
 * positions, so word stores instead of per-position shifts are most of
 * the decoder's speed. out must be 8-byte aligned with room for whole
 * words (egcd_decode_block's contract).
 */
static void
fill_run(uint64_t *out, uint32_t start, uint32_t len, int v)
{
    const uint64_t pattern = (uint64_t)v * 0x5555555555555555ull;
    uint32_t end = start + len;
    uint32_t w0 = start >> 5, w1 = end >> 5;
    uint64_t head = ~0ull << ((start & 31) * 2);
    if (w0 == w1) {
        uint64_t tail = (end & 31) ? ~0ull >> (64 - (end & 31) * 2) : 0;
        out[w0] |= pattern & head & tail;
        return;
    }
    out[w0] |= pattern & head;
    for (uint32_t w = w0 + 1; w < w1; w++)
        out[w] = pattern;
    if (end & 31)
        out[w1] |= pattern & (~0ull >> (64 - (end & 31) * 2));
}

/* Mark k (0-based) of a marked block: its fields (codec.h, MARKS). */
typedef struct mark {
    uint32_t bit, pos;
    int cur, prev;
    int spare; /* bits 37-39, zero */
} mark;

static inline mark
read_mark(const uint8_t *src, int k)
{
    const uint8_t *m = src + 1 + (size_t)k * EGCD_MARK_BYTES;
    uint64_t x = (uint64_t)m[0] | (uint64_t)m[1] << 8 | (uint64_t)m[2] << 16 |
                 (uint64_t)m[3] << 24 | (uint64_t)m[4] << 32;
    mark r = {(uint32_t)(x & 0xFFFFF), (uint32_t)(x >> 20 & 0x1FFF), (int)(x >> 33 & 3),
              (int)(x >> 35 & 3), (int)(x >> 37)};
    return r;
}

/*
 * The decoding loop of egcd_decode_page (out != NULL: the runs meeting
 * the window [skip, skip + n) filled in, the whole block checked when the
 * window ends it, marks included) and egcd_decode_value (out == NULL:
 * stops at the run holding position `want` and returns its value,
 * starting at the last mark before it). Inlined into both, so each gets
 * a loop without the other's work.
 */
static inline __attribute__((always_inline)) int
decode_runs(const egcd_decoder *d, const uint8_t *src, size_t len, uint32_t total, uint64_t *out,
            uint32_t skip, uint32_t n, uint32_t want)
{
    if (len < 1)
        return -1;
    /* Predictor state (value of the current run, value of the one before),
     * started so that the first run, coded as a hit, gets the block's first
     * value and the second is predicted to be the seed (see codec.h). */
    int v0 = src[0] & 3, seed = (src[0] >> 2) & 3;
    if (v0 == 0 || seed == 0 || v0 == seed)
        return -1;
    int cur = seed, prev = v0;
    /* Where the runs start: after the marks, if any. */
    int marked = (src[0] & EGCD_BLOCK_MARKED) != 0;
    if (src[0] & ~(3 | 3 << 2 | (d->marks ? EGCD_BLOCK_MARKED : 0)))
        return -1;
    const size_t s0 = marked ? 1 + EGCD_NMARKS * EGCD_MARK_BYTES : 1;
    if (len < s0)
        return -1;
    uint32_t pos = 0, stop = out ? skip + n : total;
    uint64_t start_bit = 0;
    /* The next mark to check: a whole decode checks them all; a probe's
     * walk, which may start at one, checks none (the block's checksum
     * covers them). */
    int next_mark = marked && out ? 0 : EGCD_NMARKS;
    if (marked && !out) {
        for (int k = EGCD_NMARKS - 1; k >= 0; k--) {
            if (egcd_mark_target(total, k) <= want) {
                mark m = read_mark(src, k);
                if (m.pos > want || m.cur == 0 || m.prev == 0 || m.cur == m.prev)
                    return -1;
                pos = m.pos;
                start_bit = m.bit;
                cur = m.cur;
                prev = m.prev;
                break;
            }
        }
    }
    /* Bit reader, most significant bit first; reads past the end see zeros
     * and are caught by the final count of bits consumed. */
    uint64_t bitbuf = 0;
    int bitcnt = 0;
    size_t p = s0 + (size_t)(start_bit >> 3);
    int drop = (int)(start_bit & 7);
    while (pos < stop) {
        if (p + 8 <= len) {
            /* Branch-free refill from an unaligned big-endian word. */
            uint64_t w;
            memcpy(&w, src + p, 8);
            bitbuf |= __builtin_bswap64(w) >> bitcnt;
            p += (size_t)(63 - bitcnt) >> 3;
            bitcnt |= 56;
        } else {
            while (bitcnt <= 56) {
                bitbuf |= (uint64_t)(p < len ? src[p] : 0) << (56 - bitcnt);
                p++;
                bitcnt += 8;
            }
        }
        if (drop) {
            /* Starting at a mark inside a byte. */
            bitbuf <<= drop;
            bitcnt -= drop;
            drop = 0;
            continue;
        }
        uint32_t e = d->fast[bitbuf >> (64 - EGCD_FAST_BITS)];
        if (!(e >> 31)) {
            /* A long code: the canonical first-code walk. */
            int sym = -1, l;
            for (l = EGCD_FAST_BITS + 1; l <= EGCD_MAX_BITS; l++) {
                uint32_t code = (uint32_t)(bitbuf >> (64 - l));
                uint32_t off = code - d->first_code[l];
                if (code >= d->first_code[l] && off < d->count[l]) {
                    sym = d->sorted[d->first_index[l] + off];
                    break;
                }
            }
            if (sym < 0)
                return -1;
            e = fast_entry(sym, l);
        }
        int l = (int)(e & 15), eb = (int)((e >> 5) & 31);
        bitbuf <<= l;
        /* The extra bits; for eb == 0 the double shift yields 0. */
        uint32_t rl = (e >> 10 & 0x1FFFFF) + (uint32_t)((bitbuf >> (63 - eb)) >> 1);
        bitbuf <<= eb;
        if (rl > total - pos)
            return -1;
        /* A whole decode checks each mark when it reaches the run the mark
         * names: the same bit offset, first position and predictor. */
        while (next_mark < EGCD_NMARKS && egcd_mark_target(total, next_mark) < pos + rl) {
            mark m = read_mark(src, next_mark);
            uint64_t at = (uint64_t)(p - s0) * 8 - (uint64_t)bitcnt;
            if (m.bit != at || m.pos != pos || m.cur != cur || m.prev != prev || m.spare)
                return -1;
            next_mark++;
        }
        bitcnt -= l + eb;
        int third = 6 - cur - prev, v = (e & 16) ? third : prev;
        prev = cur;
        cur = v;
        if (!out && want - pos < rl)
            return v;
        if (out && pos + rl > skip) {
            /* The part of the run inside the window. */
            uint32_t a = pos > skip ? pos - skip : 0, b = pos + rl - skip;
            fill_run(out, a, (b < n ? b : n) - a, v);
        }
        pos += rl;
    }
    if (!out)
        return -1; /* want >= total */
    if (skip + n < total)
        return 0; /* the rest of the block is not decoded */
    if (next_mark < EGCD_NMARKS)
        return -1;
    /* Bits consumed = bytes loaded * 8 - bits still buffered. */
    if ((uint64_t)(p - s0) * 8 - (uint64_t)bitcnt > (uint64_t)(len - s0) * 8)
        return -1;
    return 0;
}

int
egcd_decode_page(const egcd_decoder *d, const uint8_t *src, size_t len, uint32_t total,
                 uint32_t skip, uint32_t n, uint8_t *out8)
{
    uint64_t *out = (uint64_t *)(void *)out8;
    if (skip > total || n > total - skip)
        return -1;
    memset(out, 0, ((size_t)n + 31) / 32 * 8);
    return decode_runs(d, src, len, total, out, skip, n, 0);
}

int
egcd_decode_value(const egcd_decoder *d, const uint8_t *src, size_t len, uint32_t total,
                  uint32_t pos)
{
    return decode_runs(d, src, len, total, NULL, 0, 0, pos);
}
