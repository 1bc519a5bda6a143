/*
 * compare_cmds.c - `checkers compare`: our proofs of the 19 published
 * openings beside the 2007 table (openings/published-19-openings.tsv),
 * written to OUT/compare-19.md, .csv and .svg.
 *
 * Values are shown as the table shows them: for Black, who moved first.
 * Ours are what the independent checker accepts from the state's proof
 * store (summary.h), never the tree's own claim; a proven value that
 * cannot hold together with the published one is flagged CONTRADICTS.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "openings/openings.h"

static const char compare_help[] =
    "usage: checkers compare --state DIR [DIR...] [--db DIR] [--out DIR] [--no-check]\n"
    "\n"
    "Sets the proofs in the given state directories (`checkers prove --state DIR`)\n"
    "beside the published values of the 19 openings of the 2007 proof, and writes\n"
    "OUT/compare-19.md (a table row per opening, starting `| N |`), compare-19.csv\n"
    "and compare-19.svg (default OUT: results). A state is matched to its opening\n"
    "by position, so any move order that reaches it counts.\n"
    "\n"
    "For each opening: the published value (for Black, who moved first), searches\n"
    "and longest line; ours in the same terms: the value or bound the independent\n"
    "checker accepts from the state's proof store, or `unresolved` with the root's\n"
    "proof and disproof numbers, the jobs solved, the tree's depth and the longest\n"
    "win line of the proof, and the time spent. A proven value that contradicts the\n"
    "published one is flagged CONTRADICTS. --no-check reads the tree's bound\n"
    "without running the checker (faster; marked unchecked).\n"
    "\n"
    "Exit status: 0 written (1 when a row CONTRADICTS or the checker refuses a\n"
    "proof), 2 bad usage or a state\n"
    "that is not one of the 19 openings, 3 a damaged state or database.\n"
    "\n"
    "example:\n"
    "  checkers compare --state proofs/12-16_24-19_10-14 --db egdb-data\n";

typedef struct cmp_row {
    int have;
    char state[512];
    cli_summary s;
    int verdict;
} cmp_row;

/* A bound for the side to move (White) in the table's terms (Black). */
static const char *
black_word(eng_bound white)
{
    switch (eng_bound_neg(white)) {
    case ENG_WW:
        return "Win";
    case ENG_LL:
        return "Loss";
    case ENG_DD:
        return "Draw";
    case ENG_LD:
        return "<=Draw";
    case ENG_DW:
        return ">=Draw";
    default:
        return "unresolved";
    }
}

static eng_bound
ours_bound(const cmp_row *r)
{
    return r->s.checked == 1 ? r->s.bound : r->s.checked < 0 ? r->s.s.root_bound : ENG_LW;
}

static const char *
verdict_word(int v)
{
    return v == OPS_CONTRADICTS ? "CONTRADICTS" : v == OPS_AGREES ? "agrees" : "open";
}

static const char *
value_colour(const char *w)
{
    if (!strcmp(w, "Draw"))
        return "#7aa6d6";
    if (!strcmp(w, "<=Draw") || !strcmp(w, ">=Draw"))
        return "#b9d3ee";
    if (!strcmp(w, "Loss"))
        return "#e07b6a";
    if (!strcmp(w, "Win"))
        return "#6ac07b";
    return "#eeeeee";
}

/* s with the characters XML reserves escaped (the values hold "<="). */
static const char *
xml_text(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 6 < cap; s++) {
        const char *e = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : NULL;
        if (e)
            n += (size_t)snprintf(buf + n, cap - n, "%s", e);
        else
            buf[n++] = *s;
    }
    buf[n] = 0;
    return buf;
}

static int
write_svg(const char *path, const ops_book *b, const cmp_row *rows)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const int rh = 22, y0 = 60, x_no = 10, x_open = 40, x_pub = 190, x_our = 280, x_bar = 380,
              bw = 300;
    int H = y0 + OPS_PUBLISHED * rh + 50;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"10\" y=\"20\" font-size=\"15\">The 19 published openings: the 2007 "
            "proof and ours (values for Black)</text>\n"
            "<text x=\"%d\" y=\"48\">opening</text><text x=\"%d\" y=\"48\">2007</text>"
            "<text x=\"%d\" y=\"48\">ours</text>"
            "<text x=\"%d\" y=\"48\">work, log scale: grey 2007 searches, green our jobs</text>\n",
            H, x_open, x_pub, x_our, x_bar);
    for (int i = 0; i < b->npub; i++) {
        const ops_published *p = &b->pub[i];
        const cmp_row *r = &rows[i];
        int y = y0 + i * rh;
        const char *ours = r->have ? black_word(ours_bound(r)) : "not run";
        char pub_x[32], ours_x[32];
        fprintf(f,
                "<text x=\"%d\" y=\"%d\">%d</text><text x=\"%d\" y=\"%d\">%s</text>\n"
                "<rect x=\"%d\" y=\"%d\" width=\"80\" height=\"%d\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\">%s</text>\n"
                "<rect x=\"%d\" y=\"%d\" width=\"90\" height=\"%d\" fill=\"%s\"%s/>"
                "<text x=\"%d\" y=\"%d\">%s</text>\n",
                x_no, y + 15, p->no, x_open, y + 15, p->moves, x_pub, y + 3, rh - 4,
                value_colour(p->proof), x_pub + 4, y + 15, xml_text(p->proof, pub_x, sizeof pub_x),
                x_our, y + 3, rh - 4, value_colour(ours),
                r->verdict == OPS_CONTRADICTS ? " stroke=\"red\"" : "", x_our + 4, y + 15,
                r->verdict == OPS_CONTRADICTS ? "CONTRADICTS"
                                              : xml_text(ours, ours_x, sizeof ours_x));
        /* log10 scale up to 10^7 */
        double ls = p->searches ? log10((double)p->searches) / 7 : 0;
        double lj = r->have && r->s.s.jobs_done ? log10((double)r->s.s.jobs_done + 1) / 7 : 0;
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"8\" fill=\"#bbb\"/>"
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"8\" fill=\"#3a7\"/>\n",
                x_bar, y + 3, (int)(ls * bw), x_bar, y + 11, (int)(lj * bw));
    }
    int y = y0 + OPS_PUBLISHED * rh + 12;
    for (int e = 0; e <= 7; e++)
        fprintf(f,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">1e%d</text>\n",
                x_bar + e * bw / 7, y, x_bar + e * bw / 7, y + 5, x_bar + e * bw / 7, y + 17, e);
    fprintf(f, "</svg>\n");
    return fclose(f) ? -1 : 0;
}

int
cli_compare(int argc, char **argv)
{
    const char *db = NULL, *out = "results";
    const char *states[64];
    int nstates = 0, check = 1, in_states = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(compare_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(a, "--state") && i + 1 < argc) {
            in_states = 1;
        } else if (!strcmp(a, "--db") && i + 1 < argc) {
            db = argv[++i];
            in_states = 0;
        } else if (!strcmp(a, "--out") && i + 1 < argc) {
            out = argv[++i];
            in_states = 0;
        } else if (!strcmp(a, "--no-check")) {
            check = 0;
            in_states = 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "checkers compare: unknown or incomplete option '%s'\n", a);
            return CLI_EXIT_USAGE;
        } else if (in_states && nstates == 64) {
            fprintf(stderr, "checkers compare: at most 64 state directories\n");
            return CLI_EXIT_USAGE;
        } else if (in_states) {
            states[nstates++] = a;
        } else {
            fprintf(stderr, "checkers compare: '%s': state directories follow --state\n", a);
            return CLI_EXIT_USAGE;
        }
    }
    if (!nstates) {
        fprintf(stderr, "checkers compare: needs --state DIR... ('checkers compare --help')\n");
        return CLI_EXIT_USAGE;
    }
    static ops_book b;
    char err[1200];
    if (ops_load(NULL, &b, err, sizeof err)) {
        fprintf(stderr, "checkers compare: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    static cmp_row rows[OPS_PUBLISHED];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < nstates; i++) {
        cli_summary s;
        fprintf(stderr, "checkers compare: %s%s\n", states[i],
                check ? " (checking the proof)" : "");
        int rc = cli_summary_get(states[i], db, check, &s, err, sizeof err);
        if (rc) {
            fprintf(stderr, "checkers compare: %s: %s\n", states[i], err);
            return rc;
        }
        int k = 0;
        while (k < b.npub && !eng_equal(&b.pub[k].pos, &s.root))
            k++;
        if (k == b.npub) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&s.root, fen, sizeof fen);
            fprintf(stderr,
                    "checkers compare: %s proves %s, which is not the position of any of the 19 "
                    "published openings\n",
                    states[i], fen);
            return CLI_EXIT_USAGE;
        }
        if (rows[k].have) {
            fprintf(stderr, "checkers compare: %s and %s both prove opening %d; give one\n",
                    rows[k].state, states[i], b.pub[k].no);
            return CLI_EXIT_USAGE;
        }
        rows[k].have = 1;
        rows[k].s = s;
        snprintf(rows[k].state, sizeof rows[k].state, "%s", states[i]);
    }
    int contradicts = 0, refused = 0;
    for (int k = 0; k < b.npub; k++) {
        refused += rows[k].have && rows[k].s.checked == 0;
        eng_bound pub;
        if (ops_published_bound(b.pub[k].proof, &pub)) {
            fprintf(stderr, "checkers compare: opening %d: unknown published value '%s'\n",
                    b.pub[k].no, b.pub[k].proof);
            return CLI_EXIT_USAGE;
        }
        rows[k].verdict = rows[k].have ? ops_verdict(pub, ours_bound(&rows[k])) : OPS_OPEN;
        contradicts += rows[k].verdict == OPS_CONTRADICTS;
    }
    mkdir(out, 0777);
    char md[4200], csv[4200], svg[4200];
    snprintf(md, sizeof md, "%s/compare-19.md", out);
    snprintf(csv, sizeof csv, "%s/compare-19.csv", out);
    snprintf(svg, sizeof svg, "%s/compare-19.svg", out);
    FILE *fm = fopen(md, "w"), *fc = fopen(csv, "w");
    if (!fm || !fc) {
        fprintf(stderr, "checkers compare: cannot write %s: %s\n", fm ? csv : md, strerror(errno));
        if (fm)
            fclose(fm);
        if (fc)
            fclose(fc);
        return CLI_EXIT_FAIL;
    }
    fprintf(fm, "# The 19 published openings: the 2007 proof and ours\n\n"
                "Written by `checkers compare`");
    for (int i = 1; i < argc; i++)
        fprintf(fm, " %s", argv[i]);
    fprintf(fm,
            "\n\nValues are for Black, who moved first (the table's terms; our proofs are "
            "for White, to move\nafter three moves, and are shown negated). *Ours* is "
            "what the independent checker accepts from\nthe state's proof store%s. "
            "*Verdict*: `agrees` when ours settles at least the published\nclaim, "
            "`CONTRADICTS` when no value fits both, `open` otherwise. 2007 figures: "
            "Schaeffer et al.,\n\"Checkers Is Solved\", Science 317 (2007), as in "
            "`openings/published-19-openings.tsv`.\n\n"
            "![the 19 openings](compare-19.svg)\n\n"
            "| N | opening | 2007 | 2007 searches | 2007 longest line | ours | verdict | "
            "checked | root pn / dn | jobs | tree positions | tree depth | longest win "
            "line | time (s) |\n"
            "| ---: | --- | --- | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: "
            "| ---: | ---: |\n",
            check ? "" : " (here: the tree's bound, unchecked: `--no-check`)");
    fprintf(fc, "no,opening,published,published_searches,published_max_ply,state,goal,ours,"
                "verdict,checked,root_pn,root_dn,jobs,tree_positions,tree_depth,longest_win,"
                "seconds\n");
    for (int k = 0; k < b.npub; k++) {
        const ops_published *p = &b.pub[k];
        const cmp_row *r = &rows[k];
        if (!r->have) {
            fprintf(fm,
                    "| %d | %s | %s | %" PRIu64 " | %d | not run | - | - | - | - | - | - | "
                    "- | - |\n",
                    p->no, p->moves, p->proof, p->searches, p->max_ply);
            fprintf(fc, "%d,%s,%s,%" PRIu64 ",%d,,,not run,,,,,,,,,\n", p->no, p->moves, p->proof,
                    p->searches, p->max_ply);
            continue;
        }
        const char *ours = black_word(ours_bound(r));
        const char *chk = r->s.checked < 0       ? "unchecked"
                          : r->s.checked == 0    ? "REFUSED"
                          : r->s.bound == ENG_LW ? "-" /* nothing claimed */
                                                 : "valid";
        char lw[16] = "-";
        if (r->s.longest_win >= 0)
            snprintf(lw, sizeof lw, "%d", r->s.longest_win);
        char pn[24], dn[24];
        cli_pn_text(r->s.s.root_pn, pn, sizeof pn);
        cli_pn_text(r->s.s.root_dn, dn, sizeof dn);
        fprintf(fm,
                "| %d | %s | %s | %" PRIu64 " | %d | %s | %s | %s | %s / %s | %" PRIu64
                " | %" PRIu64 " | %d | %s | %.0f |\n",
                p->no, p->moves, p->proof, p->searches, p->max_ply, ours, verdict_word(r->verdict),
                chk, pn, dn, r->s.s.jobs_done, r->s.s.nodes, r->s.depth, lw, r->s.s.seconds);
        fprintf(fc,
                "%d,%s,%s,%" PRIu64 ",%d,%s,%s,%s,%s,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%d,%d,%.1f\n",
                p->no, p->moves, p->proof, p->searches, p->max_ply, r->state,
                mt_goal_name(r->s.goal), ours, verdict_word(r->verdict), chk, pn, dn,
                r->s.s.jobs_done, r->s.s.nodes, r->s.depth, r->s.longest_win, r->s.s.seconds);
        printf("%2d  %-18s  2007 %-7s ours %-10s %s\n", p->no, p->moves, p->proof, ours,
               verdict_word(r->verdict));
    }
    if (contradicts)
        fprintf(fm,
                "\n**%d proven value%s CONTRADICTS the published table.** Both cannot be "
                "right: check the proof with `checkers proof check --state DIR`.\n",
                contradicts, contradicts > 1 ? "s" : "");
    int bad = fclose(fm) | fclose(fc);
    if (bad || write_svg(svg, &b, rows)) {
        fprintf(stderr, "checkers compare: cannot write the results in %s\n", out);
        return CLI_EXIT_FAIL;
    }
    printf("%s, %s, %s written\n", md, csv, svg);
    if (refused)
        fprintf(stderr, "checkers compare: the checker REFUSED %d proof%s (see the table)\n",
                refused, refused > 1 ? "s" : "");
    if (contradicts)
        fprintf(stderr, "checkers compare: %d proven value%s CONTRADICTS the published table\n",
                contradicts, contradicts > 1 ? "s" : "");
    if (contradicts || refused)
        return CLI_EXIT_FAIL;
    return CLI_EXIT_OK;
}
