/*
 * partial_report.c - the leading-rank report of the partial-information
 * databases (egpt_report, partial.h REPORTING): seed 000's Tables 3-5
 * from the slice headers, as text, JSON or Markdown. Moved out of
 * partial.c, which builds, writes and probes the files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/partial.h"
#include "egdb/run.h"

/* ---- types ------------------------------------------------------------ */

/* Sums of one report cell or group, taken from file headers: positions,
 * positions per bound, and the capture positions among them (which the
 * paper's tables leave out). */
typedef struct agg {
    uint64_t pos, count[ENG_NBOUNDS], cap, cap_exact, cap_half;
} agg;

/* ---- helpers ---------------------------------------------------------- */

/* Dense key of a slice's material, base 13 (nbk, nwk, nbm, nwm): the
 * report groups and sorts materials by it, and decodes its digits. */
static int
slice_mat_key(const egix_slice *s)
{
    return ((s->nbk * 13 + s->nwk) * 13 + s->nbm) * 13 + s->nwm;
}

/* ---- functions -------------------------------------------------------- */

/* Adds a slice's header counts to a cell or group. */
static void
agg_add(agg *a, const egpt_slice_info *h)
{
    a->pos += h->positions;
    for (int k = 0; k < ENG_NBOUNDS; k++)
        a->count[k] += h->count[k];
    a->cap += h->captures;
    a->cap_exact += h->captures_exact;
    a->cap_half += h->captures_half;
}

/* Exact (one point) and half (LD / DW, half a point) positions. */
static uint64_t
agg_exact(const agg *a)
{
    return a->count[ENG_LL] + a->count[ENG_DD] + a->count[ENG_WW];
}

static uint64_t
agg_half(const agg *a)
{
    return a->count[ENG_LD] + a->count[ENG_DW];
}

/* Seed 000's score, in percent: exact 1, LD / DW 0.5, LW 0; over the
 * non-capture positions (noncap) or all. Negative when there is none. */
static double
agg_score(const agg *a, int noncap)
{
    double pos = (double)(noncap ? a->pos - a->cap : a->pos);
    double ex = (double)(noncap ? agg_exact(a) - a->cap_exact : agg_exact(a));
    double hf = (double)(noncap ? agg_half(a) - a->cap_half : agg_half(a));
    return pos > 0 ? 100.0 * (ex + 0.5 * hf) / pos : -1.0;
}

/* a as a percentage of b (0 when b is 0). */
static double
pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* s as a JSON string: quotes, backslashes and control bytes escaped
 * (a directory name is the only free text in the report). */
static void
json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* "1 king, 2 men" for one side. */
static void
side_text(int k, int m, char *buf, size_t len)
{
    if (k && m)
        snprintf(buf, len, "%d king%s, %d m%s", k, k > 1 ? "s" : "", m, m > 1 ? "en" : "an");
    else if (k)
        snprintf(buf, len, "%d king%s", k, k > 1 ? "s" : "");
    else if (m)
        snprintf(buf, len, "%d m%s", m, m > 1 ? "en" : "an");
    else
        snprintf(buf, len, "no piece");
}

/*
 * One table: cells [mover rank][other rank], ranks 0..7 (row + 1, 0 = no
 * men). Only the ranks that occur are printed, highest first as in seed
 * 000's tables (5 men never have rank 1, as the paper notes; 3 men can);
 * a cell without non-capture positions prints "-". Text or Markdown
 * (JSON has its own).
 */
static void
print_table(FILE *out, int format, const agg cells[8][8], const char *indent)
{
    int rows[8], cols[8], nr = 0, nc = 0;
    for (int r = 7; r >= 0; r--) {
        int any_r = 0, any_c = 0;
        for (int o = 0; o < 8; o++) {
            any_r |= cells[r][o].pos > 0;
            any_c |= cells[o][r].pos > 0;
        }
        if (any_r)
            rows[nr++] = r;
        if (any_c)
            cols[nc++] = r;
    }
    if (format == EGPT_REPORT_MARKDOWN) {
        fprintf(out, "| to move \\ other |");
        for (int c = 0; c < nc; c++)
            fprintf(out, " %d |", cols[c]);
        fprintf(out, "\n|---|");
        for (int c = 0; c < nc; c++)
            fprintf(out, "---:|");
        fprintf(out, "\n");
        for (int r = 0; r < nr; r++) {
            fprintf(out, "| **%d** |", rows[r]);
            for (int c = 0; c < nc; c++) {
                double s = agg_score(&cells[rows[r]][cols[c]], 1);
                if (s < 0)
                    fprintf(out, " - |");
                else
                    fprintf(out, " %.0f |", s);
            }
            fprintf(out, "\n");
        }
        fprintf(out, "\n");
        return;
    }
    fprintf(out, "%s    ", indent);
    for (int c = 0; c < nc; c++)
        fprintf(out, "%5d", cols[c]);
    fprintf(out, "\n");
    for (int r = 0; r < nr; r++) {
        fprintf(out, "%s%4d", indent, rows[r]);
        for (int c = 0; c < nc; c++) {
            double s = agg_score(&cells[rows[r]][cols[c]], 1);
            if (s < 0)
                fprintf(out, "%5s", "-");
            else
                fprintf(out, "%5.0f", s);
        }
        fprintf(out, "\n");
    }
}

/* The JSON cells of one table: every non-empty cell with its counts and
 * both scores, so a reader can recompute or re-aggregate them. */
static void
print_table_json(FILE *out, const agg cells[8][8])
{
    int first = 1;
    fprintf(out, "[");
    for (int r = 7; r >= 0; r--)
        for (int o = 7; o >= 0; o--) {
            const agg *a = &cells[r][o];
            if (!a->pos)
                continue;
            fprintf(out,
                    "%s{\"mover_rank\": %d, \"other_rank\": %d, \"positions\": %" PRIu64
                    ", \"noncapture\": %" PRIu64 ", \"score_noncapture\": %.2f, "
                    "\"score_all\": %.2f}",
                    first ? "" : ", ", r, o, a->pos, a->pos - a->cap, agg_score(a, 1),
                    agg_score(a, 0));
            first = 0;
        }
    fprintf(out, "]");
}

/* The summary of one group (a material or a piece count): share of each
 * bound, exact / half / unknown, and the score over all positions and
 * over the non-capture ones (the tables' measure). */
static void
print_summary(FILE *out, int format, const char *what, const agg *a, int first)
{
    static const char *const nm[ENG_NBOUNDS] = {"LL", "LD", "DD", "DW", "WW", "LW"};
    uint64_t ex = agg_exact(a), hf = agg_half(a), un = a->count[ENG_LW];
    if (format == EGPT_REPORT_JSON) {
        fprintf(out, "%s\"positions\": %" PRIu64 ", \"captures\": %" PRIu64 ", \"counts\": {",
                first ? "" : ", ", a->pos, a->cap);
        for (int k = 0; k < ENG_NBOUNDS; k++)
            fprintf(out, "%s\"%s\": %" PRIu64, k ? ", " : "", nm[k], a->count[k]);
        fprintf(out,
                "}, \"exact_pct\": %.3f, \"half_pct\": %.3f, \"unknown_pct\": %.3f, "
                "\"score_all\": %.3f, \"score_noncapture\": %.3f",
                pct(ex, a->pos), pct(hf, a->pos), pct(un, a->pos), agg_score(a, 0),
                agg_score(a, 1));
        return;
    }
    if (format == EGPT_REPORT_MARKDOWN) {
        fprintf(out, "| %s | %" PRIu64 " | %" PRIu64 " |", what, a->pos, a->cap);
        for (int k = 0; k < ENG_NBOUNDS; k++)
            fprintf(out, " %.2f |", pct(a->count[k], a->pos));
        fprintf(out, " %.2f | %.2f | %.2f | %.2f | %.2f |\n", pct(ex, a->pos), pct(hf, a->pos),
                pct(un, a->pos), agg_score(a, 0), agg_score(a, 1));
        return;
    }
    fprintf(out, "  %" PRIu64 " positions (%" PRIu64 " with a capture):", a->pos, a->cap);
    for (int k = 0; k < ENG_NBOUNDS; k++)
        fprintf(out, " %s %.2f%%", nm[k], pct(a->count[k], a->pos));
    fprintf(out,
            "\n  exact %.2f%%, half (LD/DW) %.2f%%, unknown (LW) %.2f%%; resolved (score) "
            "%.2f%% of all, %.2f%% of non-capture positions\n",
            pct(ex, a->pos), pct(hf, a->pos), pct(un, a->pos), agg_score(a, 0), agg_score(a, 1));
}

/*
 * The report is built from file headers only: each slice is one cell
 * (its material, Black's leading rank, White's leading rank), since a
 * slice is exactly the set of placements with given material and leading
 * ranks. Group g < nmat is a material, group nmat + p all materials of p
 * pieces.
 */
int
egpt_report(const char *dir, FILE *out, int format, char *err, size_t errlen)
{
    egpt_slice_info *v;
    size_t n;
    int rc = egpt_list(dir, &v, &n, err, errlen);
    if (rc != 0)
        return rc;
    if (n == 0) {
        snprintf(err, errlen, "%s: no partial slice file (.pwl)", dir);
        return EGDB_EMISSING;
    }
    if (format < EGPT_REPORT_TEXT || format > EGPT_REPORT_MARKDOWN)
        format = EGPT_REPORT_TEXT;
    /* Materials in order of piece count, then name; one table each, then
     * one per piece count. */
    int *mats = malloc(n * sizeof *mats), nmat = 0;
    if (!mats) {
        free(v);
        return EGDB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int key = slice_mat_key(&v[i].slice), seen = 0;
        for (int j = 0; j < nmat; j++)
            seen |= mats[j] == key;
        if (!seen)
            mats[nmat++] = key;
    }
    agg(*cells)[8][8] = calloc((size_t)nmat + EGPT_MAX_PIECES + 1, sizeof *cells);
    agg *tot = calloc((size_t)nmat + EGPT_MAX_PIECES + 1, sizeof *tot);
    if (!cells || !tot) {
        free(cells);
        free(tot);
        free(mats);
        free(v);
        return EGDB_ENOMEM;
    }
    /* Each slice adds to its material's cell and to its piece count's
     * cell; ranks are stored as rows (-1 = no men), cells as row + 1. */
    int npc[EGPT_MAX_PIECES + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        const egix_slice *s = &v[i].slice;
        int mi = 0;
        while (mats[mi] != slice_mat_key(s))
            mi++;
        int pc = egrun_slice_pieces(s), g = nmat + pc;
        npc[pc] = 1;
        agg_add(&cells[mi][s->rb + 1][s->rw + 1], &v[i]);
        agg_add(&tot[mi], &v[i]);
        agg_add(&cells[g][s->rb + 1][s->rw + 1], &v[i]);
        agg_add(&tot[g], &v[i]);
    }
    /* Sort materials by pieces then name (insertion sort: a handful of
     * items). The key's base-13 digits are nbk, nwk, nbm, nwm, so a
     * smaller key of the same piece count is a smaller name. */
    for (int i = 1; i < nmat; i++)
        for (int j = i; j > 0; j--) {
            int a = mats[j - 1], b = mats[j];
            int pa = a / 2197 + a / 169 % 13 + a / 13 % 13 + a % 13;
            int pb = b / 2197 + b / 169 % 13 + b / 13 % 13 + b % 13;
            if (pa < pb || (pa == pb && a < b))
                break;
            /* Keep every per-material array in step with mats[]. */
            mats[j - 1] = b;
            mats[j] = a;
            agg tmp[8][8];
            memcpy(tmp, cells[j - 1], sizeof tmp);
            memcpy(cells[j - 1], cells[j], sizeof tmp);
            memcpy(cells[j], tmp, sizeof tmp);
            agg t1 = tot[j - 1];
            tot[j - 1] = tot[j];
            tot[j] = t1;
        }

    /* Output: a heading, then per group (materials, then piece counts) its
     * summary and table; Markdown puts all summaries in one table at the
     * end, where they line up. */
    static const char *const digits = "0123456789abc";
    if (format == EGPT_REPORT_JSON) {
        fprintf(out, "{\"dir\": ");
        json_string(out, dir);
        fprintf(out, ", \"slices\": %zu, \"materials\": [", n);
    } else if (format == EGPT_REPORT_MARKDOWN)
        fprintf(out, "Resolved share of the partial database (seed 000's score: exact = 1, LD/DW = "
                     "0.5, LW = 0), in percent of the non-capture positions. Rows: leading rank of "
                     "the side to move; columns: leading rank of the other side (ranks 1-7 from "
                     "each side's own back row, 0 = no men).\n\n");
    else
        fprintf(out,
                "partial database %s: %zu slices\n"
                "tables: resolved %% of the non-capture positions (exact = 1, LD/DW = 0.5, "
                "LW = 0; seed 000 Tables 3-5);\n"
                "rows: leading rank of the side to move, columns: of the other side (1-7 from "
                "each side's back row, 0 = no men)\n",
                dir, n);
    for (int g = 0; g < nmat + EGPT_MAX_PIECES + 1; g++) {
        char what[160], mname[16], mover[40], other[40];
        if (g < nmat) {
            int k = mats[g];
            int nbk = k / 2197, nwk = k / 169 % 13, nbm = k / 13 % 13, nwm = k % 13;
            snprintf(mname, sizeof mname, "%c%c%c%c", digits[nbk], digits[nwk], digits[nbm],
                     digits[nwm]);
            side_text(nbk, nbm, mover, sizeof mover);
            side_text(nwk, nwm, other, sizeof other);
            snprintf(what, sizeof what, "material %s: side to move %s, other side %s", mname, mover,
                     other);
        } else {
            int pc = g - nmat;
            if (!npc[pc])
                continue;
            snprintf(mname, sizeof mname, "%d", pc);
            snprintf(what, sizeof what, "all %d-piece materials above", pc);
        }
        if (format == EGPT_REPORT_JSON) {
            fprintf(out, "%s{\"%s\": \"%s\", ", g ? ", " : "", g < nmat ? "material" : "pieces",
                    mname);
            print_summary(out, format, what, &tot[g], 1);
            fprintf(out, ", \"table\": ");
            print_table_json(out, cells[g]);
            fprintf(out, "}");
        } else if (format == EGPT_REPORT_MARKDOWN) {
            fprintf(out, "### %s (score %.1f%% of non-capture positions)\n\n", what,
                    agg_score(&tot[g], 1));
            print_table(out, format, cells[g], "");
        } else {
            fprintf(out, "\n%s\n", what);
            print_summary(out, format, what, &tot[g], 1);
            print_table(out, format, cells[g], "  ");
        }
    }
    if (format == EGPT_REPORT_JSON) {
        fprintf(out, "]}\n");
    } else if (format == EGPT_REPORT_MARKDOWN) {
        fprintf(out, "### Summary\n\n| material | positions | captures | LL %% | LD %% | DD %% | "
                     "DW %% | WW %% | LW %% | exact %% | half %% | unknown %% | score all %% | "
                     "score non-capture %% |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                     "---:|---:|---:|---:|\n");
        for (int g = 0; g < nmat + EGPT_MAX_PIECES + 1; g++) {
            char what[32];
            if (g < nmat) {
                int k = mats[g];
                snprintf(what, sizeof what, "%c%c%c%c", digits[k / 2197], digits[k / 169 % 13],
                         digits[k / 13 % 13], digits[k % 13]);
            } else if (npc[g - nmat]) {
                snprintf(what, sizeof what, "all %d-piece", g - nmat);
            } else {
                continue;
            }
            print_summary(out, format, what, &tot[g], 0);
        }
        fprintf(out, "\n");
    }
    free(cells);
    free(tot);
    free(mats);
    free(v);
    return ferror(out) ? EGDB_EIO : 0;
}
